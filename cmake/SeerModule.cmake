# seer_add_module(SOURCES <files...> [PUBLIC <deps...>] [PRIVATE <deps...>])
#
# One folder = one module = one library. Called from a module folder's CMakeLists.txt;
# the folder's path names the target: storage/base -> seer_storage_base, exported and
# aliased as seer::storage_base. Its headers install under
# <prefix>/include/seer/<folder>/ and are included as "<folder>/<file>.h" (the same
# spelling inside the build tree, where the include root holds only the library folders:
# see SEER_INCLUDE_ROOT in the top-level CMakeLists.txt).
include_guard(GLOBAL)
include(GNUInstallDirs)

function(seer_add_module)
  cmake_parse_arguments(M "" "" "SOURCES;PUBLIC;PRIVATE" ${ARGN})
  file(RELATIVE_PATH folder "${SEER_SOURCE_ROOT}" "${CMAKE_CURRENT_SOURCE_DIR}")
  string(REPLACE "/" "_" name "${folder}")
  set(target seer_${name})

  add_library(${target} ${M_SOURCES})
  add_library(seer::${name} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name} OUTPUT_NAME ${target})
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${SEER_INCLUDE_ROOT}>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/seer>)
  target_link_libraries(${target} PUBLIC ${M_PUBLIC} PRIVATE ${M_PRIVATE})
  seer_apply_build_options(${target})

  install(TARGETS ${target} EXPORT SeerTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  # Public headers only: *_internal.h stay private to the module and its tests.
  file(GLOB headers RELATIVE "${CMAKE_CURRENT_SOURCE_DIR}" CONFIGURE_DEPENDS
       "${CMAKE_CURRENT_SOURCE_DIR}/*.h")
  list(FILTER headers EXCLUDE REGEX "_internal\\.h$")
  install(FILES ${headers} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/seer/${folder})
endfunction()

# Warnings (always), -Werror (SEER_WERROR) and sanitizers (SEER_SANITIZE) for one target.
function(seer_apply_build_options target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra>
    $<$<AND:$<BOOL:${SEER_WERROR}>,$<COMPILE_LANGUAGE:CXX>>:-Werror>)
  if(SEER_SANITIZE)
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=${SEER_SANITIZE} -fno-sanitize-recover=all -fno-omit-frame-pointer>)
    # A sanitizer report fails the test that triggered it (no recovery).
    target_link_options(${target} PUBLIC -fsanitize=${SEER_SANITIZE} -fno-sanitize-recover=all)
  endif()
  if(SEER_ODR_CHECK)
    # Fat LTO objects: ordinary links use the machine code (-fno-lto: GCC's linker plugin
    # would otherwise optimise every executable again at link time), the ODR probe
    # (top-level CMakeLists.txt) the bytecode.
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-flto=auto -ffat-lto-objects>)
    get_target_property(type ${target} TYPE)
    if(type STREQUAL "EXECUTABLE")
      target_link_options(${target} PRIVATE -fno-lto)
    endif()
  endif()
  if(SEER_FUZZ)
    # Coverage instrumentation for libFuzzer (clang only); tests/fuzz links the fuzzer.
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=fuzzer-no-link>)
  endif()
endfunction()
