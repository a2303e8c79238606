/* Step credentials: see stepcred.h. */
#include "config.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "lib/log.h"
#include "daemon/controller/rpc/stepcred.h"
#include "daemon/controller/store/store.h"

struct stepcred {
	struct store *st;
	bool loaded;
	uint8_t key[32];
};

struct stepcred *
stepcred_create(struct store *st)
{
	struct stepcred *sc;

	if ((sc = calloc(1, sizeof(*sc))) == NULL)
		return NULL;
	sc->st = st;
	return sc;
}

void
stepcred_destroy(struct stepcred *sc)
{
	if (sc == NULL)
		return;
	OPENSSL_cleanse(sc->key, sizeof(sc->key));
	free(sc);
}

static int
stepcred_key(struct stepcred *sc, struct cerr *err)
{
	if (sc->loaded)
		return 0;
	if (store_secret(sc->st, "step_key", sc->key, sizeof(sc->key),
	    err) == -1)
		return -1;
	sc->loaded = true;
	return 0;
}

static int
stepcred_mac(struct stepcred *sc, uint64_t job_id, uint32_t attempt,
    const char *user, uint8_t out[STEPCRED_LEN], struct cerr *err)
{
	uint8_t msg[12 + 64 + 1];
	unsigned int len = STEPCRED_LEN;
	size_t ulen = strlen(user), i;

	if (stepcred_key(sc, err) == -1)
		return -1;
	if (ulen > 64)
		return cerr_set(err, ERR_INVALID, "user name too long");
	for (i = 0; i < 8; i++)
		msg[i] = (uint8_t)(job_id >> (56 - 8 * i));
	for (i = 0; i < 4; i++)
		msg[8 + i] = (uint8_t)(attempt >> (24 - 8 * i));
	memcpy(msg + 12, user, ulen);
	if (HMAC(EVP_sha256(), sc->key, sizeof(sc->key), msg, 12 + ulen, out,
	    &len) == NULL || len != STEPCRED_LEN)
		return cerr_set(err, ERR_INTERNAL, "HMAC failed");
	return 0;
}

int
stepcred_make(struct stepcred *sc, uint64_t job_id, uint32_t attempt,
    const char *user, uint8_t out[STEPCRED_LEN])
{
	struct cerr err;

	cerr_clear(&err);
	if (stepcred_mac(sc, job_id, attempt, user, out, &err) == -1) {
		log_warnx("job %llu: no step credential: %s",
		    (unsigned long long)job_id, err.text);
		return -1;
	}
	return 0;
}

int
stepcred_check(struct stepcred *sc, uint64_t job_id, uint32_t attempt,
    const char *user, const uint8_t *cred, size_t len, struct cerr *err)
{
	uint8_t want[STEPCRED_LEN];
	int rc;

	if (stepcred_mac(sc, job_id, attempt, user, want, err) == -1)
		return -1;
	rc = len == STEPCRED_LEN && CRYPTO_memcmp(want, cred, len) == 0 ? 0 :
	    cerr_set(err, ERR_DENIED, "the step credential is not job "
	    "%llu's (srun must run inside the job, as its user, while it "
	    "runs)", (unsigned long long)job_id);
	OPENSSL_cleanse(want, sizeof(want));
	return rc;
}
