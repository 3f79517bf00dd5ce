/* trace_words.c — counts the words of a ballarus trace file by kind, for
   bench/trace/run.sh.

   Usage: trace_words [--naive] FILE...
   Prints one tab-separated line, the sums over the files:
     records threads words witnesses exit_words events enters lands ends
     payload_bytes file_bytes
   words = every stream word of CHUNK and RING records (CHECKPOINT records
   describe state, not stream words, and are skipped, as are METADATA
   records, whose payload is a TU's metadata blob); events = the words
   of kEnter (4), kLand (5) and kEnd (3) events; witnesses = the rest.
   With --naive (a mode=trace-naive trace) the words equal to 1 (EXIT's
   index, which a naive build may write on edges into EXIT) are counted as
   exit_words, not witnesses, so witnesses are the executed blocks.

   The file format is runtime/trace_format.h's: a 48-byte header, then
   records of a 40-byte header, a payload of zigzag-LEB128 deltas and a
   4-byte checksum.  The checksum is not checked here (trace_read does).  */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kFileHeader = 48, kRecordHeader = 40, kMaxThreads = 4096 };
enum { kChunk = 1, kEnd = 2, kRing = 3, kCheckpoint = 4, kMetadata = 5 };

typedef struct {
  uint64_t records, words, witnesses, exit_words, events, enters, lands, ends;
  uint64_t payload_bytes;
} Totals;

static uint32_t Le32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}

/* Words still to skip of the event each thread is in (events may span
   records in traces whose runtime splits them).  */
static uint32_t pending[kMaxThreads];
static unsigned char seen[kMaxThreads];
static int naive;

static void Classify(uint32_t thread, uint32_t w, Totals *t) {
  t->words++;
  uint32_t *left = &pending[thread % kMaxThreads];
  if (*left > 0) {
    (*left)--;
    t->events++;
  } else if (w == 0xffffffffu) {
    *left = 2, t->events++, t->ends++;
  } else if (w == 0xfffffffeu) {
    *left = 4, t->events++, t->lands++;
  } else if (w & 0x80000000u) {
    *left = 3, t->events++, t->enters++;
  } else if (naive && w == 1u) {
    t->exit_words++;
  } else {
    t->witnesses++;
  }
}

/* Decodes one record's payload; returns 0, or -1 if it is malformed.  */
static int Decode(const unsigned char *p, uint32_t bytes, uint32_t count,
                  uint32_t thread, int stream, Totals *t) {
  uint32_t prev = 0, n = 0, i = 0;
  while (i < bytes) {
    uint32_t z = 0;
    int shift = 0;
    for (;;) {
      if (i >= bytes || shift > 28) return -1;
      unsigned char b = p[i++];
      z |= (uint32_t)(b & 0x7f) << shift;
      shift += 7;
      if (!(b & 0x80)) break;
    }
    prev += (z >> 1) ^ (0u - (z & 1u));
    if (stream) Classify(thread, prev, t);
    n++;
  }
  return n == count ? 0 : -1;
}

/* Adds one trace file's records to *t and *threads; returns 0 or 1.  */
static int CountFile(const char *path, Totals *t, uint64_t *threads,
                     uint64_t *file_bytes) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    perror(path);
    return 1;
  }
  memset(pending, 0, sizeof pending);
  memset(seen, 0, sizeof seen);
  unsigned char head[kRecordHeader];
  if (fread(head, 1, kFileHeader, f) != kFileHeader ||
      memcmp(head, "BALTRACE", 8) != 0) {
    fprintf(stderr, "%s: not a trace file\n", path);
    return 1;
  }
  uint64_t offset = kFileHeader;
  unsigned char *buf = NULL;
  size_t cap = 0;
  int rc = 0;
  while (fread(head, 1, kRecordHeader, f) == kRecordHeader) {
    uint32_t kind = Le32(head + 4), thread = Le32(head + 8);
    uint32_t count = Le32(head + 20), bytes = Le32(head + 24);
    if (bytes + 4u > cap) {
      cap = bytes + 4u;
      unsigned char *grown = realloc(buf, cap);
      if (grown == NULL) {
        rc = 1;
        break;
      }
      buf = grown;
    }
    if (fread(buf, 1, bytes + 4u, f) != bytes + 4u ||
        (kind != kMetadata &&
         Decode(buf, bytes, count, thread, kind == kChunk || kind == kRing,
                t) != 0)) {
      fprintf(stderr, "%s: damaged record at byte %llu\n", path,
              (unsigned long long)offset);
      rc = 1;
      break;
    }
    if (kind != kMetadata && !seen[thread % kMaxThreads])
      seen[thread % kMaxThreads] = 1, (*threads)++;
    t->records++;
    t->payload_bytes += bytes;
    offset += kRecordHeader + bytes + 4u;
  }
  *file_bytes += offset;
  free(buf);
  fclose(f);
  return rc;
}

int main(int argc, char **argv) {
  int first = 1;
  if (argc > 1 && strcmp(argv[1], "--naive") == 0) naive = 1, first = 2;
  if (argc <= first) {
    fprintf(stderr, "usage: trace_words [--naive] FILE...\n");
    return 2;
  }
  Totals t;
  memset(&t, 0, sizeof t);
  uint64_t threads = 0, file_bytes = 0;
  for (int i = first; i < argc; i++)
    if (CountFile(argv[i], &t, &threads, &file_bytes) != 0) return 1;
  printf("%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\n",
         (unsigned long long)t.records, (unsigned long long)threads,
         (unsigned long long)t.words, (unsigned long long)t.witnesses,
         (unsigned long long)t.exit_words, (unsigned long long)t.events,
         (unsigned long long)t.enters, (unsigned long long)t.lands,
         (unsigned long long)t.ends, (unsigned long long)t.payload_bytes,
         (unsigned long long)file_bytes);
  return 0;
}
