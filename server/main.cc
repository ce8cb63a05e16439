#include "server/daemon.h"

int main(int argc, char** argv) {
  gemmprof::daemon::Options options;
  if (int rc = gemmprof::daemon::ParseFlags(argc, argv, &options); rc >= 0) return rc;
  return gemmprof::daemon::Run(options);
}
