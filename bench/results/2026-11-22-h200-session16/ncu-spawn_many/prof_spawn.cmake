# Appended to bench/CMakeLists.txt for the profile (not committed there), with prof_spawn.cpp
# placed at bench/experiments/prof_spawn.cpp; then: cmake --build --preset cuda --target prof_spawn
if(WEFT_CUDA)
  add_executable(prof_spawn)
  weft_device_sources(prof_spawn experiments/prof_spawn.cpp)
  target_link_libraries(prof_spawn PRIVATE weft::weft)
  target_compile_options(prof_spawn PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-gline-tables-only>)
endif()
