/* tests/pam/pam_test_otp.c: a PAM module for the integration tests only, standing in for an
 * OTP module: it asks one more question, "Verification code: " with echo on, and accepts only
 * the code given as its argument (code=NNNNNN). Placed after pam_unix in a test's PAM service,
 * it makes the stack ask two questions, which is what a static-challenge client must answer. */
#include <security/pam_appl.h>
#include <security/pam_modules.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT int pam_sm_authenticate(pam_handle_t *h, int flags, int argc, const char **argv);
EXPORT int pam_sm_setcred(pam_handle_t *h, int flags, int argc, const char **argv);

int pam_sm_authenticate(pam_handle_t *h, int flags, int argc, const char **argv)
{
    const struct pam_conv *pc = NULL;
    const struct pam_message msg = {PAM_PROMPT_ECHO_ON, "Verification code: "};
    const struct pam_message *msgs[] = {&msg};
    struct pam_response *resp = NULL;
    const char *code = NULL;
    int ok;

    (void)flags;
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], "code=", 5) == 0) {
            code = argv[i] + 5;
        }
    }
    if (code == NULL || pam_get_item(h, PAM_CONV, (const void **)&pc) != PAM_SUCCESS ||
        pc == NULL || pc->conv(1, msgs, &resp, pc->appdata_ptr) != PAM_SUCCESS || resp == NULL) {
        return PAM_AUTH_ERR;
    }
    ok = resp[0].resp != NULL && strcmp(resp[0].resp, code) == 0;
    free(resp[0].resp);
    free(resp);
    return ok ? PAM_SUCCESS : PAM_AUTH_ERR;
}

int pam_sm_setcred(pam_handle_t *h, int flags, int argc, const char **argv)
{
    (void)h;
    (void)flags;
    (void)argc;
    (void)argv;
    return PAM_SUCCESS;
}
