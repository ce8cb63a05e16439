# cmake -DINPUT=page.html -DOUTPUT=page.cc -P embed_page.cmake
# Writes a C++ file whose DashboardPage() returns INPUT's bytes as a raw string literal.
file(READ "${INPUT}" content)
set(delim "gemmprof_page")
string(FIND "${content}" ")${delim}\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains the raw-string delimiter )${delim}\"")
endif()
file(WRITE "${OUTPUT}.tmp"
  "// Generated from ${INPUT} by embed_page.cmake; do not edit.\n"
  "#include \"server/http/dashboard_page.h\"\n\n"
  "namespace gemmprof::http {\n\n"
  "std::string_view DashboardPage() {\n"
  "  static constexpr char kPage[] = R\"${delim}(${content})${delim}\";\n"
  "  return {kPage, sizeof(kPage) - 1};\n"
  "}\n\n"
  "}  // namespace gemmprof::http\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
