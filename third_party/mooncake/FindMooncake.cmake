# FindMooncake.cmake: finds an existing build of upstream Mooncake's store
# client (kvcache-ai/Mooncake). Ours; it builds nothing and writes nothing
# into upstream's trees.
#
# What it needs is an upstream source tree with its build tree: upstream's
# install step (and its wheels) ship neither the store's C++ headers
# (real_client.h, ...) nor its static libraries, so no install prefix can be
# linked; see README.md next to this file.
#
# Inputs (CMake variables, or environment variables of the same name):
#   MOONCAKE_PREFIX        an upstream source tree, its build tree at
#                          <prefix>/build
#   MOONCAKE_SOURCE_DIR    upstream source tree   } instead of MOONCAKE_PREFIX,
#   MOONCAKE_BUILD_DIR     upstream build tree    } for a build tree elsewhere
#
# The build tree may come from CMake's Makefile generators or from Ninja,
# configured with any of upstream's options (USE_ETCD, STORE_USE_ETCD,
# USE_REDIS, STORE_USE_REDIS, ENABLE_KV_EVENTS, ...).
#
# Outputs:
#   Mooncake_FOUND
#   Mooncake_COMMIT         the source tree's commit, or "unknown"
#   Mooncake_GENERATOR      the generator of the build tree (CMakeCache.txt)
#   Mooncake_LINK_SOURCE    the file the link line was read from
#   Mooncake_OPTIONS        upstream's options as the compile definitions show
#                           them: USE_ETCD=ON;STORE_USE_ETCD=OFF;...
#   Mooncake_COMPILE_DEFINITIONS, Mooncake_INCLUDE_DIRS, Mooncake_LINK,
#   Mooncake_LINK_DIRS      what the imported target carries
#   Mooncake_SHARED_LIBS    the shared libraries of the link that the dynamic
#                           loader does not find by itself (libasio.so,
#                           libetcd_wrapper.so, ...), full paths
#   Mooncake_RUNTIME_DIRS   their directories, for an rpath
#   Mooncake::store         imported target: include directories, compile
#                           definitions and options, link directories and the
#                           full link line

include(FindPackageHandleStandardArgs)

foreach(_v MOONCAKE_PREFIX MOONCAKE_SOURCE_DIR MOONCAKE_BUILD_DIR)
  if(NOT ${_v} AND DEFINED ENV{${_v}})
    set(${_v} "$ENV{${_v}}")
  endif()
endforeach()

set(_mc_missing "")

# ---- where is it? ---------------------------------------------------------------
if(MOONCAKE_SOURCE_DIR OR MOONCAKE_BUILD_DIR)
  if(NOT MOONCAKE_SOURCE_DIR OR NOT MOONCAKE_BUILD_DIR)
    list(APPEND _mc_missing "MOONCAKE_SOURCE_DIR and MOONCAKE_BUILD_DIR must be given together")
  endif()
elseif(MOONCAKE_PREFIX)
  if(EXISTS "${MOONCAKE_PREFIX}/mooncake-store/include/real_client.h")
    set(MOONCAKE_SOURCE_DIR "${MOONCAKE_PREFIX}")
    set(MOONCAKE_BUILD_DIR "${MOONCAKE_PREFIX}/build")
  elseif(EXISTS "${MOONCAKE_PREFIX}/bin/mooncake_master" OR EXISTS "${MOONCAKE_PREFIX}/include/transfer_engine.h")
    list(APPEND _mc_missing
      "${MOONCAKE_PREFIX} looks like an install prefix of upstream (bin/mooncake_master, include/transfer_engine.h). Upstream's install ships neither the store's headers nor its libraries, so it cannot be linked: set MOONCAKE_PREFIX to the upstream source tree it was built from (its build tree in <tree>/build), or MOONCAKE_SOURCE_DIR and MOONCAKE_BUILD_DIR")
  else()
    list(APPEND _mc_missing
      "${MOONCAKE_PREFIX}/mooncake-store/include/real_client.h (MOONCAKE_PREFIX must be an upstream source tree, its build tree in <tree>/build)")
  endif()
else()
  list(APPEND _mc_missing
    "no location given: set MOONCAKE_PREFIX (an upstream source tree with its build in <tree>/build), or MOONCAKE_SOURCE_DIR and MOONCAKE_BUILD_DIR")
endif()

set(_mc_includes "")
set(_mc_defs "")
set(_mc_opts "")
set(_mc_link "")
set(_mc_linkdirs "")
set(Mooncake_SHARED_LIBS "")
set(Mooncake_RUNTIME_DIRS "")
set(Mooncake_COMMIT "unknown")
set(Mooncake_GENERATOR "unknown")
set(Mooncake_LINK_SOURCE "")
set(Mooncake_OPTIONS "")

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

# Directories the dynamic loader searches without an rpath.
function(_mc_is_system_dir d out)
  if(d MATCHES "^/(usr/)?lib(32|64|x32)?(/|$)")
    set(${out} TRUE PARENT_SCOPE)
  else()
    set(${out} FALSE PARENT_SCOPE)
  endif()
endfunction()

# Turns the arguments of upstream's own link of mooncake_client (the
# libraries and library flags only: no objects, no executable flags) into
# our link: static and shared libraries by absolute path, -L directories,
# -l names, -pthread. Relative paths are relative to `base` (the directory
# the generator runs the link in). Sets _mc_p_link, _mc_p_dirs (the -L
# directories) and _mc_p_shared (shared libraries outside the loader's own
# directories: by path, or an -l name found in an -L directory).
function(_mc_parse_link_args args base)
  set(link "")
  set(dirs "")
  set(libnames "")
  set(shared "")
  set(next "")
  foreach(a IN LISTS args)
    if(next STREQUAL "L")
      set(a "-L${a}")
      set(next "")
    endif()
    if(a STREQUAL "-L")
      set(next L)
    elseif(a MATCHES "^-L(.+)$")
      set(d "${CMAKE_MATCH_1}")
      get_filename_component(d "${d}" ABSOLUTE BASE_DIR "${base}")
      list(APPEND dirs "${d}")
    elseif(a MATCHES "^-Wl,-rpath," OR a MATCHES "^-Wl,-rpath-link,")
      # Upstream's rpath is for its own executable; ours is computed from
      # the libraries themselves (Mooncake_RUNTIME_DIRS).
    elseif(a MATCHES "\\.(a|so)(\\.[0-9.]+)?$" AND NOT a MATCHES "^-")
      get_filename_component(a "${a}" ABSOLUTE BASE_DIR "${base}")
      list(APPEND link "${a}")
      if(a MATCHES "\\.so(\\.[0-9.]+)?$")
        get_filename_component(d "${a}" DIRECTORY)
        _mc_is_system_dir("${d}" sys)
        if(NOT sys)
          list(APPEND shared "${a}")
        endif()
      endif()
    elseif(a MATCHES "^-l(.+)$")
      list(APPEND link "${a}")
      list(APPEND libnames "${CMAKE_MATCH_1}")
    elseif(a STREQUAL "-pthread" OR a MATCHES "^-Wl,")
      # -Wl, flags other than the rpath (--whole-archive, --start-group,
      # --as-needed, ...) change how the libraries around them link; they
      # are kept in place. Upstream's link of mooncake_client has none today.
      list(APPEND link "${a}")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES dirs)
  # An -l name resolves, as the linker does it, in the first -L directory
  # holding lib<name>.so (or .a); one of ours needs an rpath at run time.
  list(REMOVE_DUPLICATES libnames)
  foreach(n IN LISTS libnames)
    foreach(d IN LISTS dirs)
      if(EXISTS "${d}/lib${n}.so")
        _mc_is_system_dir("${d}" sys)
        if(NOT sys)
          list(APPEND shared "${d}/lib${n}.so")
        endif()
        break()
      elseif(EXISTS "${d}/lib${n}.a")
        break()
      endif()
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES shared)
  set(_mc_p_link "${link}" PARENT_SCOPE)
  set(_mc_p_dirs "${dirs}" PARENT_SCOPE)
  set(_mc_p_shared "${shared}" PARENT_SCOPE)
endfunction()

if(NOT _mc_missing)
  set(_hdr "${MOONCAKE_SOURCE_DIR}/mooncake-store/include/real_client.h")
  set(_cache "${MOONCAKE_BUILD_DIR}/CMakeCache.txt")
  set(_ccdb "${MOONCAKE_BUILD_DIR}/compile_commands.json")
  set(_store_a "${MOONCAKE_BUILD_DIR}/mooncake-store/src/libmooncake_store.a")
  foreach(f IN ITEMS "${_hdr}" "${_cache}" "${_ccdb}" "${_store_a}")
    if(NOT EXISTS "${f}")
      list(APPEND _mc_missing "${f}")
    endif()
  endforeach()
endif()

# ---- which generator built it, and where it recorded the link ------------------
#
# The store's link line is upstream's own link of its mooncake_client
# program (real_client_main.cpp + libmooncake_store.a and everything that
# needs): the libraries, their order, the -L directories and the shared
# libraries exactly as upstream resolved them for this build, whatever the
# options (USE_ETCD adds -L<build>/mooncake-common/etcd -letcd_wrapper,
# USE_REDIS hiredis, ENABLE_KV_EVENTS libzmq, ...). Each generator writes that
# link command where its build tool reads it:
#   - Makefile generators: <build>/mooncake-store/src/CMakeFiles/
#     mooncake_client.dir/link.txt, paths relative to <build>/mooncake-store/src;
#   - Ninja: the link statement of mooncake-store/src/mooncake_client in
#     <build>/build.ninja (variables LINK_PATH and LINK_LIBRARIES), paths
#     relative to <build>.
# We read the one the build tree's generator (CMAKE_GENERATOR in its
# CMakeCache.txt) wrote. Not chosen:
#   - CMake's file API (<build>/.cmake/api/v1/reply) is generator-neutral,
#     but it is written only when a query was placed before upstream was
#     configured. No build made the usual way has one, and making one means
#     re-running upstream's configure in the user's tree.
#   - The generator-neutral parts of the build tree (CMakeCache.txt,
#     cmake_install.cmake, compile_commands.json) record no link line: the
#     cache holds options, not the resolved libraries (its <target>_LIB_DEPENDS
#     entries are gone since CMP0073 and named direct dependencies only).
#   - Re-deriving the libraries from options would repeat upstream's CMake
#     logic here and drift with every upstream commit.
if(NOT _mc_missing)
  file(STRINGS "${_cache}" _gen REGEX "^CMAKE_GENERATOR:INTERNAL=")
  string(REGEX REPLACE "^CMAKE_GENERATOR:INTERNAL=" "" _gen "${_gen}")
  if(_gen)
    set(Mooncake_GENERATOR "${_gen}")
  endif()

  if(_gen MATCHES "Makefiles$")
    set(Mooncake_LINK_SOURCE "${MOONCAKE_BUILD_DIR}/mooncake-store/src/CMakeFiles/mooncake_client.dir/link.txt")
    if(NOT EXISTS "${Mooncake_LINK_SOURCE}")
      list(APPEND _mc_missing "${Mooncake_LINK_SOURCE} (the ${_gen} generator writes it when upstream's build is generated: was mooncake_client built, WITH_STORE=ON?)")
    else()
      file(READ "${Mooncake_LINK_SOURCE}" _lt)
      string(STRIP "${_lt}" _lt)
      separate_arguments(_largs UNIX_COMMAND "${_lt}")
      # Everything after "-o mooncake_client" is the libraries.
      set(_after "")
      set(_take FALSE)
      set(_skip_next FALSE)
      foreach(a IN LISTS _largs)
        if(_skip_next)
          set(_skip_next FALSE)
          set(_take TRUE)
        elseif(a STREQUAL "-o")
          set(_skip_next TRUE)
        elseif(_take)
          list(APPEND _after "${a}")
        endif()
      endforeach()
      _mc_parse_link_args("${_after}" "${MOONCAKE_BUILD_DIR}/mooncake-store/src")
    endif()
  elseif(_gen STREQUAL "Ninja")
    set(Mooncake_LINK_SOURCE "${MOONCAKE_BUILD_DIR}/build.ninja")
    if(NOT EXISTS "${Mooncake_LINK_SOURCE}")
      list(APPEND _mc_missing "${Mooncake_LINK_SOURCE}")
    else()
      file(READ "${Mooncake_LINK_SOURCE}" _bn)
      # A statement's variables are the indented lines after it, up to the
      # first blank line; "$" then newline continues a line.
      string(FIND "${_bn}" "\nbuild mooncake-store/src/mooncake_client: " _at)
      if(_at LESS 0)
        list(APPEND _mc_missing "the link statement of mooncake-store/src/mooncake_client in ${Mooncake_LINK_SOURCE} (was mooncake_client built, WITH_STORE=ON?)")
      else()
        math(EXPR _at "${_at} + 1")
        string(SUBSTRING "${_bn}" ${_at} -1 _stmt)
        string(FIND "${_stmt}" "\n\n" _end)
        if(_end GREATER 0)
          string(SUBSTRING "${_stmt}" 0 ${_end} _stmt)
        endif()
        string(REGEX REPLACE "\\$\n *" "" _stmt "${_stmt}")
        set(_nargs "")
        foreach(_var LINK_PATH LINK_LIBRARIES)
          if(_stmt MATCHES "\n  ${_var} = ([^\n]*)")
            set(_val "${CMAKE_MATCH_1}")
            # Ninja's escapes: $$ is $, "$ " a space, $: a colon.
            string(ASCII 1 _soh)
            string(REPLACE "$$" "${_soh}" _val "${_val}")
            string(REPLACE "$ " " " _val "${_val}")
            string(REPLACE "$:" ":" _val "${_val}")
            string(REPLACE "${_soh}" "$" _val "${_val}")
            separate_arguments(_vargs UNIX_COMMAND "${_val}")
            list(APPEND _nargs ${_vargs})
          endif()
        endforeach()
        _mc_parse_link_args("${_nargs}" "${MOONCAKE_BUILD_DIR}")
      endif()
    endif()
  else()
    list(APPEND _mc_missing
      "a link line from the build tree's generator \"${_gen}\" (${_cache}): FindMooncake reads those of the Makefile generators (link.txt) and of Ninja (build.ninja). Reconfigure upstream into a new build tree with -G \"Unix Makefiles\" or -G Ninja")
  endif()
  if(NOT _mc_missing)
    set(_mc_link "${_mc_p_link}")
    set(_mc_linkdirs "${_mc_p_dirs}")
    set(Mooncake_SHARED_LIBS "${_mc_p_shared}")
    foreach(s IN LISTS Mooncake_SHARED_LIBS)
      get_filename_component(_d "${s}" DIRECTORY)
      list(APPEND Mooncake_RUNTIME_DIRS "${_d}")
    endforeach()
    list(REMOVE_DUPLICATES Mooncake_RUNTIME_DIRS)
    foreach(s IN LISTS Mooncake_SHARED_LIBS)
      if(NOT EXISTS "${s}")
        list(APPEND _mc_missing "${s} (on upstream's link line)")
      endif()
    endforeach()
    if(NOT _mc_link)
      list(APPEND _mc_missing "libraries in ${Mooncake_LINK_SOURCE}")
    endif()
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${Mooncake_LINK_SOURCE}")
  endif()
endif()

# ---- compile flags: the compile database entry of real_client.cpp --------------
# (both generators write compile_commands.json; upstream turns it on in
# mooncake-common/common.cmake)
if(NOT _mc_missing)
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
  else()
    # Upstream's options, as compiled. USE_ETCD, USE_REDIS (transfer engine
    # metadata), STORE_USE_ETCD, STORE_USE_REDIS (the store's HA backends) and
    # USE_ETCD_LEGACY, STORE_USE_K8S_LEASE are global definitions, so the
    # store client's own has them. ENABLE_KV_EVENTS defines
    # MOONCAKE_ENABLE_KV_EVENTS=1 on the master's objects only (the store
    # client compiles the publisher's stub): look for it in the whole
    # database.
    foreach(o USE_ETCD STORE_USE_ETCD USE_REDIS STORE_USE_REDIS USE_ETCD_LEGACY STORE_USE_K8S_LEASE)
      if(o IN_LIST _mc_defs)
        list(APPEND Mooncake_OPTIONS "${o}=ON")
      else()
        list(APPEND Mooncake_OPTIONS "${o}=OFF")
      endif()
    endforeach()
    string(FIND "${_json}" "-DMOONCAKE_ENABLE_KV_EVENTS=1" _kv)
    if(_kv GREATER_EQUAL 0)
      list(APPEND Mooncake_OPTIONS "ENABLE_KV_EVENTS=ON")
    else()
      list(APPEND Mooncake_OPTIONS "ENABLE_KV_EVENTS=OFF")
    endif()
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_ccdb}")
endif()

if(NOT _mc_missing)
  find_package(Git QUIET)
  if(GIT_FOUND AND EXISTS "${MOONCAKE_SOURCE_DIR}/.git")
    execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${MOONCAKE_SOURCE_DIR}" rev-parse HEAD
      OUTPUT_VARIABLE _c OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _r ERROR_QUIET)
    if(_r EQUAL 0)
      set(Mooncake_COMMIT "${_c}")
    endif()
  endif()
endif()

if(_mc_missing)
  string(REPLACE ";" "\n    " _mc_msg "${_mc_missing}")
  set(Mooncake_NOT_FOUND_MESSAGE "Mooncake not found. Missing:\n    ${_mc_msg}")
  set(Mooncake_MISSING "${_mc_missing}")
  set(_mc_link "")
endif()

find_package_handle_standard_args(Mooncake
  REQUIRED_VARS MOONCAKE_BUILD_DIR _mc_link
  REASON_FAILURE_MESSAGE "${Mooncake_NOT_FOUND_MESSAGE}")

if(Mooncake_FOUND AND NOT TARGET Mooncake::store)
  add_library(Mooncake::store INTERFACE IMPORTED)
  set_target_properties(Mooncake::store PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${_mc_includes}"
    INTERFACE_COMPILE_DEFINITIONS "${_mc_defs}"
    INTERFACE_COMPILE_OPTIONS "${_mc_opts}"
    INTERFACE_LINK_DIRECTORIES "${_mc_linkdirs}"
    INTERFACE_LINK_LIBRARIES "${_mc_link}")
  set(Mooncake_COMPILE_DEFINITIONS "${_mc_defs}")
  set(Mooncake_INCLUDE_DIRS "${_mc_includes}")
  set(Mooncake_LINK "${_mc_link}")
  set(Mooncake_LINK_DIRS "${_mc_linkdirs}")
endif()
