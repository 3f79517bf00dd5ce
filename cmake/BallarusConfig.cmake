# BallarusConfig.cmake — find_package(Ballarus) for projects built with the
# ballarus wrappers (see ballarus-toolchain.cmake beside this file).
#
# Provides
#   Ballarus_PREFIX              the installation prefix
#   Ballarus_RECONSTRUCT         PREFIX/bin/ballarus-reconstruct
#   Ballarus::reconstruct        the same, as an imported executable
#   ballarus_add_report_target(NAME [FORMAT fmt] [OUTPUT path]
#                              [PROFILE_DIR dir...] [ARGS arg...])
#       a custom target (not part of ALL) that runs
#         ballarus-reconstruct FORMAT ARGS... -o OUTPUT PROFILE_DIR...
#       on the profiles the build's programs wrote.  FORMAT is a
#       ballarus-reconstruct report command: html (default), lcov,
#       cobertura, or any other that takes -o.  OUTPUT defaults to
#       CMAKE_BINARY_DIR/NAME (html: a directory), NAME.info (lcov) or
#       NAME.xml (cobertura); PROFILE_DIR defaults to CMAKE_BINARY_DIR,
#       where the programs write OBJ.bprof beside each object.
#   ballarus_name_tests([DIRECTORY dir] [TESTS test...])
#       names every CTest test added so far in the directory (default:
#       the current source directory; so call it after the add_test()
#       calls), or the tests listed: appends BALLARUS_TEST=<test name> to
#       each test's ENVIRONMENT property (other entries are kept), so that
#       the counts of its processes are kept under its name in the
#       profiles (named runs), beside the sum.  Another directory than the
#       current one needs CMake 3.28 (set_property(TEST ... DIRECTORY)).

get_filename_component(Ballarus_PREFIX "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
set(Ballarus_RECONSTRUCT "${Ballarus_PREFIX}/bin/ballarus-reconstruct")

if(NOT EXISTS "${Ballarus_RECONSTRUCT}")
  set(Ballarus_FOUND FALSE)
  set(Ballarus_NOT_FOUND_MESSAGE "missing ${Ballarus_RECONSTRUCT}; reinstall ballarus")
  return()
endif()

if(NOT TARGET Ballarus::reconstruct)
  add_executable(Ballarus::reconstruct IMPORTED)
  set_target_properties(Ballarus::reconstruct PROPERTIES
    IMPORTED_LOCATION "${Ballarus_RECONSTRUCT}")
endif()

function(ballarus_add_report_target name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "FORMAT;OUTPUT" "PROFILE_DIR;ARGS")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "ballarus_add_report_target: unknown arguments: ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT arg_FORMAT)
    set(arg_FORMAT html)
  endif()
  if(NOT arg_OUTPUT)
    if(arg_FORMAT STREQUAL "lcov")
      set(arg_OUTPUT "${CMAKE_BINARY_DIR}/${name}.info")
    elseif(arg_FORMAT STREQUAL "cobertura")
      set(arg_OUTPUT "${CMAKE_BINARY_DIR}/${name}.xml")
    else()
      set(arg_OUTPUT "${CMAKE_BINARY_DIR}/${name}")
    endif()
  endif()
  if(NOT arg_PROFILE_DIR)
    set(arg_PROFILE_DIR "${CMAKE_BINARY_DIR}")
  endif()
  add_custom_target(${name}
    COMMAND "${Ballarus_RECONSTRUCT}" ${arg_FORMAT} ${arg_ARGS}
            -o "${arg_OUTPUT}" ${arg_PROFILE_DIR}
    WORKING_DIRECTORY "${CMAKE_BINARY_DIR}"
    COMMENT "ballarus-reconstruct ${arg_FORMAT}: ${arg_OUTPUT}"
    VERBATIM)
endfunction()

function(ballarus_name_tests)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "DIRECTORY" "TESTS")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "ballarus_name_tests: unknown arguments: ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT arg_DIRECTORY)
    set(arg_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}")
  endif()
  if(NOT arg_TESTS)
    get_property(arg_TESTS DIRECTORY "${arg_DIRECTORY}" PROPERTY TESTS)
  endif()
  get_filename_component(dir "${arg_DIRECTORY}" ABSOLUTE)
  set(where "")
  if(NOT dir STREQUAL CMAKE_CURRENT_SOURCE_DIR)
    if(CMAKE_VERSION VERSION_LESS 3.28)
      message(FATAL_ERROR "ballarus_name_tests: DIRECTORY ${arg_DIRECTORY} "
        "is not the current directory, which needs CMake 3.28; call "
        "ballarus_name_tests() in that directory's CMakeLists.txt")
    endif()
    set(where DIRECTORY "${dir}")
  endif()
  foreach(test IN LISTS arg_TESTS)
    set_property(TEST "${test}" ${where}
      APPEND PROPERTY ENVIRONMENT "BALLARUS_TEST=${test}")
  endforeach()
endfunction()
