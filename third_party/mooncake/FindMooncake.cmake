# FindMooncake.cmake: finds an existing build of upstream Mooncake's store
# client (kvcache-ai/Mooncake). Ours; it builds nothing.
#
# Inputs (CMake variables, or environment variables of the same name):
#   MOONCAKE_PREFIX        an upstream source tree (with its build tree at
#                          <prefix>/build), or an install prefix holding the
#                          store headers and static libraries
#   MOONCAKE_SOURCE_DIR    upstream source tree   } instead of MOONCAKE_PREFIX,
#   MOONCAKE_BUILD_DIR     upstream build tree    } for a build tree elsewhere
#   MOONCAKE_COMPILE_DEFINITIONS  only for an install prefix: the -D
#                          definitions upstream's store library was built with
#
# Outputs:
#   Mooncake_FOUND, Mooncake_MODE ("build-tree" or "prefix"), Mooncake_COMMIT
#   (or "unknown"), Mooncake_RUNTIME_DIRS (directories of shared libraries
#   the link needs, for an rpath), and the imported target Mooncake::store
#   carrying include directories, compile definitions and options, and the
#   full link line.

include(FindPackageHandleStandardArgs)

foreach(_v MOONCAKE_PREFIX MOONCAKE_SOURCE_DIR MOONCAKE_BUILD_DIR MOONCAKE_COMPILE_DEFINITIONS)
  if(NOT ${_v} AND DEFINED ENV{${_v}})
    set(${_v} "$ENV{${_v}}")
  endif()
endforeach()

set(_mc_missing "")
set(Mooncake_MODE "")

# ---- where is it? ---------------------------------------------------------------
if(MOONCAKE_SOURCE_DIR OR MOONCAKE_BUILD_DIR)
  if(NOT MOONCAKE_SOURCE_DIR OR NOT MOONCAKE_BUILD_DIR)
    list(APPEND _mc_missing "MOONCAKE_SOURCE_DIR and MOONCAKE_BUILD_DIR must be given together")
  else()
    set(Mooncake_MODE build-tree)
  endif()
elseif(MOONCAKE_PREFIX)
  if(EXISTS "${MOONCAKE_PREFIX}/mooncake-store/include/real_client.h")
    set(MOONCAKE_SOURCE_DIR "${MOONCAKE_PREFIX}")
    set(MOONCAKE_BUILD_DIR "${MOONCAKE_PREFIX}/build")
    set(Mooncake_MODE build-tree)
  else()
    set(Mooncake_MODE prefix)
  endif()
else()
  list(APPEND _mc_missing
    "no location given: set MOONCAKE_PREFIX (an upstream source tree with its build in <tree>/build, or an install prefix with the store headers), or MOONCAKE_SOURCE_DIR and MOONCAKE_BUILD_DIR")
endif()

set(_mc_includes "")
set(_mc_defs "")
set(_mc_opts "")
set(_mc_link "")
set(Mooncake_RUNTIME_DIRS "")
set(Mooncake_COMMIT "unknown")

# Splits one compiler command line into include dirs, definitions and the
# options that change the ABI or what headers accept.
function(_mc_parse_compile_command cmd dir)
  separate_arguments(_args UNIX_COMMAND "${cmd}")
  set(inc "")
  set(defs "")
  set(opts "")
  set(next "")
  foreach(a IN LISTS _args)
    if(next STREQUAL "inc")
      list(APPEND inc "${a}")
      set(next "")
      continue()
    endif()
    if(a STREQUAL "-isystem" OR a STREQUAL "-I")
      set(next inc)
    elseif(a MATCHES "^-I(.+)$")
      list(APPEND inc "${CMAKE_MATCH_1}")
    elseif(a MATCHES "^-D(.+)$")
      list(APPEND defs "${CMAKE_MATCH_1}")
    elseif(a MATCHES "^-std=" OR a STREQUAL "-fcoroutines" OR a MATCHES "^-march=" OR a MATCHES "^-mavx")
      list(APPEND opts "${a}")
    endif()
  endforeach()
  set(abs "")
  foreach(i IN LISTS inc)
    if(NOT IS_ABSOLUTE "${i}")
      get_filename_component(i "${i}" ABSOLUTE BASE_DIR "${dir}")
    endif()
    # Upstream lists some directories that do not exist; CMake refuses
    # those on an imported target.
    if(IS_DIRECTORY "${i}")
      list(APPEND abs "${i}")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES abs)
  set(_mc_p_inc "${abs}" PARENT_SCOPE)
  set(_mc_p_defs "${defs}" PARENT_SCOPE)
  set(_mc_p_opts "${opts}" PARENT_SCOPE)
endfunction()

if(Mooncake_MODE STREQUAL "build-tree")
  set(_hdr "${MOONCAKE_SOURCE_DIR}/mooncake-store/include/real_client.h")
  set(_ccdb "${MOONCAKE_BUILD_DIR}/compile_commands.json")
  set(_linktxt "${MOONCAKE_BUILD_DIR}/mooncake-store/src/CMakeFiles/mooncake_client.dir/link.txt")
  set(_store_a "${MOONCAKE_BUILD_DIR}/mooncake-store/src/libmooncake_store.a")
  foreach(f IN ITEMS "${_hdr}" "${_ccdb}" "${_store_a}" "${_linktxt}")
    if(NOT EXISTS "${f}")
      list(APPEND _mc_missing "${f}")
    endif()
  endforeach()

  if(NOT _mc_missing)
    # Compile flags: the compile database entry of real_client.cpp.
    file(READ "${_ccdb}" _json)
    string(JSON _n LENGTH "${_json}")
    set(_found FALSE)
    if(_n GREATER 0)
      math(EXPR _last "${_n} - 1")
      foreach(i RANGE ${_last})
        string(JSON _file GET "${_json}" ${i} file)
        if(_file MATCHES "mooncake-store/src/real_client\\.cpp$")
          string(JSON _dir GET "${_json}" ${i} directory)
          string(JSON _cmd ERROR_VARIABLE _err GET "${_json}" ${i} command)
          if(_err)
            # "arguments" form: join it back into one command line.
            string(JSON _na LENGTH "${_json}" ${i} arguments)
            math(EXPR _la "${_na} - 1")
            set(_cmd "")
            foreach(j RANGE ${_la})
              string(JSON _arg GET "${_json}" ${i} arguments ${j})
              string(APPEND _cmd " \"${_arg}\"")
            endforeach()
          endif()
          _mc_parse_compile_command("${_cmd}" "${_dir}")
          set(_mc_includes "${_mc_p_inc}")
          set(_mc_defs "${_mc_p_defs}")
          set(_mc_opts "${_mc_p_opts}")
          set(_found TRUE)
          break()
        endif()
      endforeach()
    endif()
    if(NOT _found)
      list(APPEND _mc_missing "an entry for mooncake-store/src/real_client.cpp in ${_ccdb}")
    endif()

    # Link line: upstream's own link of its mooncake_client program, minus
    # that program's object file and executable-only flags.
    file(READ "${_linktxt}" _lt)
    string(STRIP "${_lt}" _lt)
    separate_arguments(_largs UNIX_COMMAND "${_lt}")
    set(_ldir "${MOONCAKE_BUILD_DIR}/mooncake-store/src")
    set(_take FALSE)
    set(_skip_next FALSE)
    foreach(a IN LISTS _largs)
      if(_skip_next)
        set(_skip_next FALSE)
        continue()
      endif()
      if(a STREQUAL "-o")
        set(_skip_next TRUE)
        set(_take TRUE)
        continue()
      endif()
      if(NOT _take)
        continue()
      endif()
      if(a MATCHES "\\.(a|so)(\\.[0-9.]+)?$")
        if(NOT IS_ABSOLUTE "${a}")
          get_filename_component(a "${a}" ABSOLUTE BASE_DIR "${_ldir}")
        endif()
        list(APPEND _mc_link "${a}")
        if(a MATCHES "\\.so(\\.[0-9.]+)?$")
          get_filename_component(_d "${a}" DIRECTORY)
          if(NOT _d MATCHES "^/usr/lib" AND NOT _d MATCHES "^/lib")
            list(APPEND Mooncake_RUNTIME_DIRS "${_d}")
          endif()
        endif()
      elseif(a MATCHES "^-l" OR a STREQUAL "-pthread")
        list(APPEND _mc_link "${a}")
      endif()
    endforeach()
    list(REMOVE_DUPLICATES Mooncake_RUNTIME_DIRS)
    if(NOT _mc_link)
      list(APPEND _mc_missing "libraries in ${_linktxt}")
    endif()
  endif()

  find_package(Git QUIET)
  if(GIT_FOUND AND EXISTS "${MOONCAKE_SOURCE_DIR}/.git")
    execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${MOONCAKE_SOURCE_DIR}" rev-parse HEAD
      OUTPUT_VARIABLE _c OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _r ERROR_QUIET)
    if(_r EQUAL 0)
      set(Mooncake_COMMIT "${_c}")
    endif()
  endif()

elseif(Mooncake_MODE STREQUAL "prefix")
  find_path(_mc_inc real_client.h
    PATHS "${MOONCAKE_PREFIX}/include" "${MOONCAKE_PREFIX}/include/mooncake-store"
    NO_DEFAULT_PATH)
  if(NOT _mc_inc)
    list(APPEND _mc_missing "real_client.h under ${MOONCAKE_PREFIX}/include (upstream's install step does not ship it: use the source and build trees instead)")
  endif()
  foreach(lib mooncake_store transfer_engine mooncake_common)
    find_library(_mc_lib_${lib} NAMES ${lib} PATHS "${MOONCAKE_PREFIX}/lib" "${MOONCAKE_PREFIX}/lib64" NO_DEFAULT_PATH)
    if(_mc_lib_${lib})
      list(APPEND _mc_link "${_mc_lib_${lib}}")
    else()
      list(APPEND _mc_missing "lib${lib} under ${MOONCAKE_PREFIX}/lib")
    endif()
  endforeach()
  if(NOT MOONCAKE_COMPILE_DEFINITIONS)
    list(APPEND _mc_missing "MOONCAKE_COMPILE_DEFINITIONS (an install prefix does not record the definitions upstream's store was compiled with, and a mismatch is an ABI break)")
  endif()
  set(_mc_includes "${_mc_inc}" "${MOONCAKE_PREFIX}/include")
  set(_mc_defs "${MOONCAKE_COMPILE_DEFINITIONS}")
  set(_mc_opts "-std=gnu++20" "-fcoroutines")
  list(APPEND _mc_link glog gflags jsoncpp xxhash yaml-cpp numa ibverbs curl zstd uring pthread dl)
endif()

if(_mc_missing)
  string(REPLACE ";" "\n    " _mc_msg "${_mc_missing}")
  set(Mooncake_NOT_FOUND_MESSAGE "Mooncake not found. Missing:\n    ${_mc_msg}")
  set(Mooncake_MISSING "${_mc_missing}")
endif()

find_package_handle_standard_args(Mooncake
  REQUIRED_VARS Mooncake_MODE _mc_link
  REASON_FAILURE_MESSAGE "${Mooncake_NOT_FOUND_MESSAGE}")

if(Mooncake_FOUND AND _mc_missing)
  set(Mooncake_FOUND FALSE)
endif()

if(Mooncake_FOUND AND NOT TARGET Mooncake::store)
  add_library(Mooncake::store INTERFACE IMPORTED)
  set_target_properties(Mooncake::store PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${_mc_includes}"
    INTERFACE_COMPILE_DEFINITIONS "${_mc_defs}"
    INTERFACE_COMPILE_OPTIONS "${_mc_opts}"
    INTERFACE_LINK_LIBRARIES "${_mc_link}")
  set(Mooncake_COMPILE_DEFINITIONS "${_mc_defs}")
  set(Mooncake_INCLUDE_DIRS "${_mc_includes}")
  set(Mooncake_LINK "${_mc_link}")
endif()
