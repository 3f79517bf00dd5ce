/* gentext.c — writes a deterministic, text-like byte stream for the bzip2
 * workload (bench/run.sh).
 *
 *   gentext BYTES [SEED] > FILE
 *
 * Words are built from a fixed syllable table and drawn with a skewed
 * (roughly Zipfian) distribution by a xorshift64* generator, then set into
 * sentences, lines of at most 72 columns and paragraphs, with occasional
 * numbers — so the stream compresses about as well as English prose
 * (bzip2 gets it to ~30%), and every build, machine and run gets the same
 * bytes: only integer arithmetic, no libc randomness, no locale. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t state;

static uint64_t next(void) { /* xorshift64* (Vigna 2016) */
  state ^= state >> 12;
  state ^= state << 25;
  state ^= state >> 27;
  return state * 0x2545F4914F6CDD1DULL;
}

static unsigned below(unsigned n) { return (unsigned)((next() >> 33) % n); }

enum { kWords = 4096 };
static char words[kWords][24];

static const char *const syllables[] = {
    "the", "an", "or", "in", "er", "on", "at", "en", "re", "es", "ti", "al",
    "ing", "ou", "ar", "st", "ver", "com", "pro", "ex", "per", "tion", "ment",
    "ble", "con", "de", "dis", "un", "pre", "ly", "ful", "ness", "ca", "ba",
    "lo", "mi", "su", "ta", "ne", "po", "gra", "sco", "fi", "mu", "ra", "vi"};

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: gentext BYTES [SEED]\n");
    return 2;
  }
  long long total = atoll(argv[1]);
  state = argc == 3 ? strtoull(argv[2], 0, 10) : 20240605u;
  if (total <= 0 || state == 0) {
    fprintf(stderr, "gentext: BYTES and SEED must be positive\n");
    return 2;
  }
  const unsigned nsyl = sizeof syllables / sizeof *syllables;
  for (unsigned w = 0; w < kWords; ++w) {
    unsigned n = 1 + below(3) + (w > 512) + (w > 2048);
    words[w][0] = 0;
    for (unsigned s = 0; s < n; ++s) strcat(words[w], syllables[below(nsyl)]);
  }
  static char out[1 << 16];
  size_t used = 0;
  long long written = 0;
  unsigned col = 0, in_sentence = 0, sentences = 0;
  while (written < total) {
    char tok[64];
    /* Skewed choice: the minimum of three draws favours small indices,
     * masked down to a random power of two. */
    unsigned a = below(kWords), b = below(kWords), c = below(kWords);
    unsigned w = a < b ? (a < c ? a : c) : (b < c ? b : c);
    w &= (1u << (4 + below(9))) - 1;
    if (below(40) == 0)
      snprintf(tok, sizeof tok, "%u", below(100000));
    else
      snprintf(tok, sizeof tok, "%s", words[w]);
    if (!in_sentence && tok[0] >= 'a') tok[0] -= 'a' - 'A';
    in_sentence = 1;
    unsigned r = below(100);
    if (r < 8) {
      strcat(tok, ".");
      in_sentence = 0;
      ++sentences;
    } else if (r < 14) {
      strcat(tok, ",");
    }
    size_t len = strlen(tok);
    if (col + 1 + len > 72) {
      out[used++] = '\n';
      col = 0;
      if (!in_sentence && sentences % 7 == 0) out[used++] = '\n';
    } else if (col > 0) {
      out[used++] = ' ';
      ++col;
    }
    memcpy(out + used, tok, len);
    used += len;
    col += len;
    if (used > sizeof out - 256) {
      size_t n = used;
      if ((long long)n > total - written) n = (size_t)(total - written);
      if (fwrite(out, 1, n, stdout) != n) return 1;
      written += n;
      used = 0;
    }
  }
  return fflush(stdout) == 0 ? 0 : 1;
}
