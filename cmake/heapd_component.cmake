# heapd_component(NAME DIR dir [EXECUTABLE|MODULE] SOURCES ... [PUBLIC deps...] [PRIVATE deps...])
#
# One component: a folder of the source tree (DIR, from the repository's root) built as one target.
# Its headers are included by their path from the root ("formats/hprof/hprof_reader.h"), but the
# root itself is on nobody's include path: each component puts on it a directory of its own, in the
# build tree, that holds a link to its folder and nothing else, as a PUBLIC include directory. A
# target therefore sees the folders of itself and of the components it links, and those they link
# PUBLIC, and no other: an include of a component it does not depend on fails to compile.
#
# Each component's folder, what it may include and which outside libraries it links are written to
# ${PROJECT_BINARY_DIR}/layering.txt; its folder and what it links directly (component folders, then
# outside libraries by their CMake names) to components.txt. The layering test
# (tests/cmake/heapd_component_test.cpp) checks every include against the first and the table and
# picture of docs/architecture.md against the second.
function(heapd_component name)
  cmake_parse_arguments(C "EXECUTABLE;MODULE" "DIR" "SOURCES;PUBLIC;PRIVATE" ${ARGN})
  if(C_EXECUTABLE)
    add_executable(${name} ${C_SOURCES})
  elseif(C_MODULE)
    add_library(${name} MODULE ${C_SOURCES})  # a library loaded at run time (dlopen), linked by nothing
  else()
    add_library(${name} STATIC ${C_SOURCES})
  endif()
  set(root "${PROJECT_BINARY_DIR}/include/${name}")
  get_filename_component(parent "${root}/${C_DIR}" DIRECTORY)
  file(MAKE_DIRECTORY "${parent}")
  file(CREATE_LINK "${PROJECT_SOURCE_DIR}/${C_DIR}" "${root}/${C_DIR}" SYMBOLIC)
  if(C_EXECUTABLE OR C_MODULE)
    target_include_directories(${name} PRIVATE "${root}")
  else()
    target_include_directories(${name} PUBLIC "$<BUILD_INTERFACE:${root}>")
  endif()
  target_link_libraries(${name} PUBLIC ${C_PUBLIC} PRIVATE ${C_PRIVATE})

  # What the component shows those that link it (visible) and what it may use itself (allowed):
  # component folders and outside libraries.
  set(visible "${C_DIR}")
  set(allowed "${C_DIR}")
  set(direct "")
  foreach(kind PUBLIC PRIVATE)
    foreach(dep ${C_${kind}})
      if(TARGET ${dep})
        get_target_property(seen ${dep} HEAPD_VISIBLE)
        get_target_property(dep_dir ${dep} HEAPD_DIR)
      else()
        set(seen "seen-NOTFOUND")
        set(dep_dir "dep_dir-NOTFOUND")
      endif()
      if(NOT seen)
        set(seen "lib:${dep}")  # an outside library
      endif()
      if(dep_dir)
        list(APPEND direct "${dep_dir}")
      else()
        list(APPEND direct "lib:${dep}")
      endif()
      list(APPEND allowed ${seen})
      if(kind STREQUAL "PUBLIC")
        list(APPEND visible ${seen})
      endif()
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES visible)
  list(REMOVE_DUPLICATES allowed)
  set_target_properties(${name} PROPERTIES HEAPD_VISIBLE "${visible}" HEAPD_DIR "${C_DIR}")
  list(JOIN allowed " " line)
  set_property(GLOBAL APPEND PROPERTY HEAPD_LAYERING "${C_DIR}: ${line}")
  list(JOIN direct " " line)
  set_property(GLOBAL APPEND PROPERTY HEAPD_COMPONENTS "${C_DIR}: ${line}")
endfunction()

# Writes layering.txt and components.txt once every component is declared.
function(heapd_write_layering)
  get_property(lines GLOBAL PROPERTY HEAPD_LAYERING)
  list(JOIN lines "\n" text)
  file(WRITE "${PROJECT_BINARY_DIR}/layering.txt" "${text}\n")
  get_property(lines GLOBAL PROPERTY HEAPD_COMPONENTS)
  list(JOIN lines "\n" text)
  file(WRITE "${PROJECT_BINARY_DIR}/components.txt" "${text}\n")
endfunction()
