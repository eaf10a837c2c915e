# What the upstream tree being linked has, decided at configure time: the
# native shim is written against the newest tested upstream (the first line
# of third_party/mooncake/PIN), and older ones (v0.3.12.post1) lack some of
# its calls and options. features_probe.cc is compiled once against
# Mooncake::store's include directories, compile definitions and options;
# it answers, per feature, whether upstream has it, and each answer becomes
# the compile definition MCGO_HAVE_<feature> (0 or 1) of mcgo_native. The
# shim's #if MCGO_HAVE_<feature> branches return MCGO_NOT_SUPPORTED where
# upstream lacks a call, and refuse an option it lacks with it, and
# mcgo_store_capabilities reports them (cgo/include/mcgo/store.h).
#
#   -DMCGO_NATIVE_DISABLE="SESSIONS;SOFT_PIN_ACTIONS"  builds as if upstream
#       lacked those features (to run the suites' not-supported cases
#       against an upstream that has them).
#
# The answers are cached per upstream tree, flags and probe source, so only
# the first configure of a build directory pays the compile (about as long
# as one file of store/).

set(MCGO_FEATURES SESSIONS MULTI_BUFFER_UPSERT SOFT_PIN_ACTIONS DFS_REPLICAS DRAIN_LOCAL_DISK TE_TOPOLOGY_STRING)
set(MCGO_NATIVE_DISABLE "" CACHE STRING "Features to build without even when upstream has them (features.cmake)")

function(mcgo_probe_features)
  set(probe "${CMAKE_CURRENT_LIST_DIR}/features_probe.cc")
  get_target_property(inc Mooncake::store INTERFACE_INCLUDE_DIRECTORIES)
  get_target_property(defs Mooncake::store INTERFACE_COMPILE_DEFINITIONS)
  get_target_property(opts Mooncake::store INTERFACE_COMPILE_OPTIONS)
  foreach(v inc defs opts)
    if(NOT ${v})
      set(${v} "")
    endif()
  endforeach()
  file(SHA256 "${probe}" probe_sha)
  string(SHA256 key "${Mooncake_COMMIT}|${inc}|${defs}|${opts}|${CMAKE_CXX_COMPILER}|${probe_sha}")
  if(DEFINED CACHE{MCGO_FEATURES_PROBED} AND MCGO_FEATURES_KEY STREQUAL key)
    return()
  endif()

  set(dflags "")
  foreach(d IN LISTS defs)
    list(APPEND dflags "-D${d}")
  endforeach()
  set(out_file "${CMAKE_CURRENT_BINARY_DIR}/mcgo_features/probe.a")
  file(REMOVE "${out_file}")
  message(STATUS "Mooncake features: probing the upstream headers (one compile)")
  # A static library: compiled, not linked (upstream's link line is not
  # needed to know what its headers declare).
  set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
  try_compile(ok "${CMAKE_CURRENT_BINARY_DIR}/mcgo_features" "${probe}"
    CMAKE_FLAGS "-DINCLUDE_DIRECTORIES=${inc}"
    COMPILE_DEFINITIONS ${dflags} ${opts}
    CXX_STANDARD 20
    CXX_STANDARD_REQUIRED ON
    COPY_FILE "${out_file}"
    OUTPUT_VARIABLE log)
  if(NOT ok)
    file(WRITE "${CMAKE_CURRENT_BINARY_DIR}/mcgo_features/probe.log" "${log}")
    message(FATAL_ERROR
      "make native: the feature probe (cgo/native/features_probe.cc) does not compile against this "
      "upstream tree, so its headers are not usable as found; the compiler's output is in "
      "${CMAKE_CURRENT_BINARY_DIR}/mcgo_features/probe.log")
  endif()
  file(STRINGS "${out_file}" lines REGEX "MCGO_HAVE\\[")
  string(JOIN " " text ${lines})
  foreach(f IN LISTS MCGO_FEATURES)
    if(text MATCHES "MCGO_HAVE\\[${f}=([01])\\]")
      set(MCGO_HAVE_${f} ${CMAKE_MATCH_1} CACHE INTERNAL "upstream has ${f} (features.cmake)")
    else()
      message(FATAL_ERROR "make native: the feature probe said nothing about ${f} (features.cmake and features_probe.cc disagree)")
    endif()
  endforeach()
  set(MCGO_FEATURES_KEY "${key}" CACHE INTERNAL "what the cached feature answers were probed with")
  set(MCGO_FEATURES_PROBED 1 CACHE INTERNAL "")
endfunction()

mcgo_probe_features()

set(_have "")
set(_lack "")
foreach(f IN LISTS MCGO_FEATURES)
  set(v ${MCGO_HAVE_${f}})
  if(f IN_LIST MCGO_NATIVE_DISABLE)
    set(v 0)
  endif()
  target_compile_definitions(mcgo_native PRIVATE MCGO_HAVE_${f}=${v})
  string(TOLOWER "${f}" name)
  if(v)
    list(APPEND _have ${name})
  elseif(f IN_LIST MCGO_NATIVE_DISABLE)
    list(APPEND _lack "${name} (MCGO_NATIVE_DISABLE)")
  else()
    list(APPEND _lack ${name})
  endif()
endforeach()
foreach(f IN LISTS MCGO_NATIVE_DISABLE)
  if(NOT f IN_LIST MCGO_FEATURES)
    message(FATAL_ERROR "MCGO_NATIVE_DISABLE: no feature ${f} (features: ${MCGO_FEATURES})")
  endif()
endforeach()
string(JOIN ", " _have_s ${_have})
string(JOIN ", " _lack_s ${_lack})
if(NOT _have_s)
  set(_have_s "none")
endif()
if(NOT _lack_s)
  set(_lack_s "none")
endif()
message(STATUS "Mooncake features: has ${_have_s}; lacks ${_lack_s}")
