# prims_defaults(target): the project's warning flags and CUDA options for a compiled target.
function(prims_defaults target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra --extended-lambda --expt-relaxed-constexpr>)
  target_compile_features(${target} PRIVATE cxx_std_17 cuda_std_17)
endfunction()
