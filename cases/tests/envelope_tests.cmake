# Envelope and logits-only result file tests (included from cases/tests/CMakeLists.txt).
pmqa_add_test(NAME pmqa_envelope_test
  SOURCES envelope_test.cpp
  LIBS pmqa_fixtures_rc
  LABELS property)
target_compile_definitions(pmqa_envelope_test PRIVATE PMQA_ENVELOPE_DIR="${PROJECT_SOURCE_DIR}/cases/data/envelopes")

# PMQA_FIT / PMQA_ENVELOPE as the property suites read them.
add_executable(pmqa_envelope_env_test envelope_env_test.cpp)
target_link_libraries(pmqa_envelope_env_test PRIVATE pmqa_fixtures_rc pmqa_warnings)
set(_pmqa_overlay "${PROJECT_SOURCE_DIR}/cases/data/envelopes/overlays/vllm-eager.json")
foreach(fit IN ITEMS "deepgemm;deepgemm;cuda" "aiter-fused:cuda;aiter-fused;cuda" "aiter-stage1:rocm;aiter-stage1;rocm")
  list(GET fit 0 value)
  list(GET fit 1 convention)
  list(GET fit 2 platform)
  add_test(NAME cases.envelope.pmqa_fit.${convention}.${platform}
           COMMAND pmqa_envelope_env_test ${convention} ${platform})
  set_tests_properties(cases.envelope.pmqa_fit.${convention}.${platform} PROPERTIES
    ENVIRONMENT "PMQA_FIT=${value}" LABELS property)
endforeach()
add_test(NAME cases.envelope.pmqa_fit.eager.overlay COMMAND pmqa_envelope_env_test eager cuda)
set_tests_properties(cases.envelope.pmqa_fit.eager.overlay PROPERTIES
  ENVIRONMENT "PMQA_FIT=eager:cuda;PMQA_ENVELOPE=${_pmqa_overlay}" LABELS property)
foreach(bad IN ITEMS "PMQA_FIT=nope|no envelope for convention" "PMQA_FIT=aiter-fused|choose one"
                     "PMQA_FIT=deepgemm:tpu|unknown platform" "PMQA_ENVELOPE=/nonexistent.json|PMQA_FIT is not")
  string(REPLACE "|" ";" parts "${bad}")
  list(GET parts 0 env)
  list(GET parts 1 text)
  string(MAKE_C_IDENTIFIER "${env}" id)
  add_test(NAME cases.envelope.bad_environment.${id} COMMAND pmqa_envelope_env_test --error "${text}")
  set_tests_properties(cases.envelope.bad_environment.${id} PROPERTIES ENVIRONMENT "${env}" LABELS unit)
endforeach()

# Logits-only result files (pmqa-run --logits-only, pmqa verify --cases).
pmqa_add_test(NAME pmqa_logits_file_test
  SOURCES logits_file_test.cpp
  LIBS pmqa_cases pmqa_fixtures
  LABELS unit)
