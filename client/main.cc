#include <iostream>

#include "client/app.h"

int main(int argc, char** argv) {
  gemmprof::client::App app;
  return app.Run(argc, argv, std::cout, std::cerr);
}
