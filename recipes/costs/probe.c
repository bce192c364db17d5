/* The first-build estimate's probe: a fixed amount of the work builds do
 * (the host compiler optimising C), timed in CPU seconds to scale the
 * recorded stage costs to this machine. Changing it changes the figure:
 * rerun bench/stage-costs after any edit. */
#define F(n)                                                                  \
    unsigned long f##n(const unsigned char *p, unsigned long len, unsigned long s) \
    {                                                                         \
        for (unsigned long i = 0; i < len; i++) {                             \
            switch ((p[i] + n) & 7) {                                          \
            case 0: s = s * 31 + p[i]; break;                                 \
            case 1: s ^= s << 13; s ^= s >> 7; break;                         \
            case 2: s += (s >> 3) * (unsigned long)(n + 1); break;           \
            case 3: s = (s << 5) | (s >> 59); break;                          \
            case 4: s -= p[i] * 0x9e3779b97f4a7c15ul; break;                  \
            case 5: s = s % 1000003 + i; break;                               \
            case 6: s ^= (unsigned long)len << (i & 15); break;              \
            default: s += i * i; break;                                       \
            }                                                                 \
            if (s & 1) s = s / 3 + (unsigned long)n; else s = s * 5 + 1;      \
        }                                                                     \
        return s;                                                             \
    }
#define F10(n) F(n##0) F(n##1) F(n##2) F(n##3) F(n##4) F(n##5) F(n##6) F(n##7) F(n##8) F(n##9)
#define F100(n) F10(n##0) F10(n##1) F10(n##2) F10(n##3) F10(n##4) F10(n##5) F10(n##6) F10(n##7) F10(n##8) F10(n##9)
F100(1) F100(2)
