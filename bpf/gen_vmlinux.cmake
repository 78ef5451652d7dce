# Build-time generation of vmlinux.h: from the running kernel's BTF when it
# exists, otherwise the checked-in minimal fallback (CO-RE relocates either).
# Inputs: BTF, BPFTOOL, FALLBACK, OUT.
if(EXISTS "${BTF}" AND BPFTOOL)
  execute_process(COMMAND "${BPFTOOL}" btf dump file "${BTF}" format c
    OUTPUT_FILE "${OUT}.tmp" RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(rc EQUAL 0)
    file(RENAME "${OUT}.tmp" "${OUT}")
    return()
  endif()
  message(WARNING "bpftool btf dump of ${BTF} failed (${err}); using ${FALLBACK}")
else()
  message(STATUS "${BTF} missing: using the checked-in ${FALLBACK}")
endif()
configure_file("${FALLBACK}" "${OUT}" COPYONLY)
