# Compiler flags shared by every Hearth target, and the helpers that make a
# layer's headers visible only to the targets that may include them.

add_library(hearth_warnings INTERFACE)
target_compile_options(hearth_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
                            -Wnon-virtual-dtor -Wold-style-cast -Wcast-align -Woverloaded-virtual
                            -Wimplicit-fallthrough -Werror>
  $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings -Xcompiler=-Wall,-Wextra,-Werror>)
# GCC 12/13 at -O3 report -Wrestrict and -Warray-bounds inside libstdc++'s
# std::string inlined into our code (GCC bugs 105329, 105651: no overlap or
# out-of-bounds access exists). They stay warnings there, not errors, so the
# Release presets build; every other warning is still an error.
target_compile_options(hearth_warnings INTERFACE
  $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:GNU>,$<CONFIG:Release>>:-Wno-error=restrict -Wno-error=array-bounds>)

if(HEARTH_SANITIZE_ADDRESS)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=address,undefined)
endif()
if(HEARTH_SANITIZE_THREAD)
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
endif()

# hearth_layer_includes(TARGET LAYER): the target's users see LAYER's sources as
# "LAYER/...". Each layer gets its own include root holding one link named after
# it, so a target that does not link a layer cannot include its headers: a
# forbidden include fails to build.
function(hearth_layer_includes target layer)
  set(root ${CMAKE_BINARY_DIR}/layer-include/${layer})
  if(NOT EXISTS ${root}/${layer})
    file(MAKE_DIRECTORY ${root})
    file(CREATE_LINK ${CMAKE_SOURCE_DIR}/${layer} ${root}/${layer} SYMBOLIC)
  endif()
  get_target_property(kind ${target} TYPE)
  if(kind STREQUAL "INTERFACE_LIBRARY")
    target_include_directories(${target} INTERFACE ${root})
  else()
    target_include_directories(${target} PUBLIC ${root})
  endif()
endfunction()

# hearth_add_test(NAME SOURCES... [LIBS ...] [LABELS ...]): one GoogleTest
# executable registered with ctest (each TEST a ctest case).
include(GoogleTest)
function(hearth_add_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${T_SOURCES} ${T_UNPARSED_ARGUMENTS})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main hearth_warnings)
  target_compile_definitions(${name} PRIVATE HEARTH_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
  if(NOT T_LABELS)
    set(T_LABELS unit)
  endif()
  gtest_discover_tests(${name} PROPERTIES LABELS "${T_LABELS}" DISCOVERY_TIMEOUT 60)
endfunction()
