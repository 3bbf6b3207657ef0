# Writes the console's page, script and style into one header (cmake -P), so the
# binary serves them with nothing read from disk at run time.
set(out "// Generated from leasectl/console/ by embed.cmake; do not edit.\n#pragma once\n#include <string_view>\nnamespace leasefs::leasectl {\n")
foreach(pair "kConsoleHtml=index.html" "kConsoleJs=console.js" "kConsoleCss=console.css"
    "kFleetHtml=fleet.html" "kFleetJs=fleet.js")
  string(REPLACE "=" ";" parts "${pair}")
  list(GET parts 0 name)
  list(GET parts 1 file)
  file(READ "${SRC}/${file}" text)
  string(FIND "${text}" ")leasefs_asset\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${file} holds the raw string's delimiter")
  endif()
  string(APPEND out "inline constexpr std::string_view ${name} = R\"leasefs_asset(${text})leasefs_asset\";\n")
endforeach()
string(APPEND out "}  // namespace leasefs::leasectl\n")
file(WRITE "${OUT}.tmp" "${out}")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
