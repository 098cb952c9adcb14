/* rng.c — xoshiro256** seeded through splitmix64.
 *
 * Why not rand(): the bootstrap and the simulation must give the same
 * interval for the same seed on every machine and libc, and draw tens of
 * millions of indices quickly. xoshiro256** (Blackman and Vigna) passes the
 * usual batteries and costs a few cycles a draw. */
#include "stats/stats.h"

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void pp_rng_seed(pp_rng *r, uint64_t seed) {
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k) {
    return (x << k) | (x >> (64 - k));
}

uint64_t pp_rng_next(pp_rng *r) {
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

/* Lemire's multiply-shift with rejection: exact uniformity, one 128-bit
 * multiply in the common case. */
__extension__ typedef unsigned __int128 u128;

uint64_t pp_rng_below(pp_rng *r, uint64_t n) {
    u128 m = (u128)pp_rng_next(r) * n;
    uint64_t low = (uint64_t)m;
    if (low < n) {
        uint64_t threshold = -n % n;
        while (low < threshold) {
            m = (u128)pp_rng_next(r) * n;
            low = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}

double pp_rng_unit(pp_rng *r) {
    return (double)(pp_rng_next(r) >> 11) * 0x1.0p-53;
}
