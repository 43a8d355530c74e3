# cmake -DCVM=<cvm program> -DOUT=<folder> -P WriteCompletions.cmake: writes the completion scripts
# that `cvm completions SHELL` prints, under the names bash-completion, zsh and fish look for.
file(MAKE_DIRECTORY ${OUT})
foreach(pair "bash;cvm" "zsh;_cvm" "fish;cvm.fish")
  list(GET pair 0 shell)
  list(GET pair 1 name)
  execute_process(COMMAND ${CVM} completions ${shell} OUTPUT_FILE ${OUT}/${name} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "`cvm completions ${shell}` failed (${rc})")
  endif()
endforeach()
