#include "words.h"

#include <ctype.h>
#include <string.h>

void words_upper(char *s) {
  for (; *s != '\0'; s++) *s = (char)toupper((unsigned char)*s);
}

void words_reverse(char *s) {
  size_t n = strlen(s);
  for (size_t i = 0; i < n / 2; i++) {
    char c = s[i];
    s[i] = s[n - 1 - i];
    s[n - 1 - i] = c;
  }
}

int words_vowels(const char *s) {
  int n = 0;
  for (; *s != '\0'; s++)
    if (strchr("aeiou", *s) != NULL) n++;
  return n;
}

int words_digits(const char *s) {
  int n = 0;
  for (; *s != '\0'; s++)
    if (isdigit((unsigned char)*s)) n++;
  return n;
}
