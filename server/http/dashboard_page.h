// The dashboard page served at / (dashboard.html, compiled into the binary).
#pragma once

#include <string_view>

namespace gemmprof::http {

// The whole page: HTML with its CSS and JavaScript inline; it loads nothing else.
std::string_view DashboardPage();

}  // namespace gemmprof::http
