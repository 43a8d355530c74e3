# Run after the musl link of cvm-shim (shims/CMakeLists.txt): the program must not contain a
# std::locale constructor. libstdc++ was built against glibc, and its locale facets read glibc's
# locale structure, which musl's is not; as long as no locale can be made, no facet ever runs.
execute_process(COMMAND ${NM} ${SHIM} OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cannot list the symbols of ${SHIM} with ${NM}")
endif()
string(REGEX MATCH "_ZNSt6localeC[12]E[A-Za-z0-9_]*|_ZNSt6locale7classicEv" found "${symbols}")
if(found)
  file(REMOVE ${SHIM})
  message(FATAL_ERROR "cvm-shim (linked against musl) now contains ${found}: something the shim "
                      "runs uses std::locale (an iostream, a regex, std::tolower with a locale). "
                      "Keep such code out of what the shim links, or configure with -DCVM_SHIM_MUSL=OFF.")
endif()
