# Version of the ballarus CMake package.  find_package(Ballarus X.Y)
# accepts it when X.Y is not newer and names the same major version (while
# the major version is 0, the same minor version too).
set(PACKAGE_VERSION "0.4.0")

set(PACKAGE_VERSION_COMPATIBLE FALSE)
if(NOT PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION AND
   PACKAGE_FIND_VERSION_MAJOR EQUAL 0)
  if(PACKAGE_FIND_VERSION_COUNT LESS 2 OR PACKAGE_FIND_VERSION_MINOR EQUAL 4)
    set(PACKAGE_VERSION_COMPATIBLE TRUE)
  endif()
endif()
if(PACKAGE_FIND_VERSION VERSION_EQUAL PACKAGE_VERSION)
  set(PACKAGE_VERSION_EXACT TRUE)
endif()
