# ballarus-toolchain.cmake — build a CMake project with the ballarus
# wrappers:
#
#   cmake -DCMAKE_TOOLCHAIN_FILE=PREFIX/lib/cmake/Ballarus/ballarus-toolchain.cmake ...
#
# Sets the C and C++ compilers to PREFIX/bin/ballarus-gcc and ballarus-g++,
# the LTO archiver helpers (ballarus-gcc-ar, ballarus-gcc-ranlib) that
# INTERPROCEDURAL_OPTIMIZATION archives with, and Ballarus_DIR, so
# find_package(Ballarus) finds this package without CMAKE_PREFIX_PATH.
# The wrappers drive $BALLARUS_CC / $BALLARUS_CXX (default gcc / g++).

get_filename_component(_ballarus_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)

set(CMAKE_C_COMPILER "${_ballarus_prefix}/bin/ballarus-gcc")
set(CMAKE_CXX_COMPILER "${_ballarus_prefix}/bin/ballarus-g++")
foreach(_ballarus_lang C CXX)
  set(CMAKE_${_ballarus_lang}_COMPILER_AR "${_ballarus_prefix}/bin/ballarus-gcc-ar"
      CACHE FILEPATH "ar with the LTO plugin of the compiler ballarus drives")
  set(CMAKE_${_ballarus_lang}_COMPILER_RANLIB "${_ballarus_prefix}/bin/ballarus-gcc-ranlib"
      CACHE FILEPATH "ranlib with the LTO plugin of the compiler ballarus drives")
endforeach()
set(Ballarus_DIR "${CMAKE_CURRENT_LIST_DIR}" CACHE PATH "the ballarus CMake package")

unset(_ballarus_lang)
unset(_ballarus_prefix)
