# cmake -DINFO=<blkrr-version.cmake> -DOUT=<changelog.gz> -P changelog.cmake
# The Debian changelog of a package built from this tree: one entry for the
# version of the build (a native package has no history of its own; the git
# log is the history). Dated SOURCE_DATE_EPOCH when set.
include(${INFO})
if(DEFINED ENV{SOURCE_DATE_EPOCH})
  set(epoch $ENV{SOURCE_DATE_EPOCH})
else()
  string(TIMESTAMP epoch "%s" UTC)
endif()
execute_process(COMMAND date -u -R -d @${epoch} OUTPUT_VARIABLE date OUTPUT_STRIP_TRAILING_WHITESPACE)
set(text "blkrr (${BLKRR_DEB_VERSION}) unstable; urgency=medium

  * Built from the blkrr source tree, version ${BLKRR_VERSION}
    (git describe); see the project's git log for the changes.

 -- blkrr maintainers <maintainers@users.noreply.a-seed-31fbb2fe.example>  ${date}
")
get_filename_component(dir ${OUT} DIRECTORY)
file(WRITE ${dir}/changelog "${text}")
execute_process(COMMAND gzip -9nf ${dir}/changelog RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gzip ${dir}/changelog failed")
endif()
