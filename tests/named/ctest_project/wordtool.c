/* wordtool MODE WORD: prints WORD upper-cased or reversed, or its number
   of vowels or digits; MODE "env" takes the mode from WORDTOOL_MODE.  */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "words.h"

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: wordtool upper|reverse|vowels|digits|env WORD\n");
    return 2;
  }
  const char *mode = argv[1];
  if (strcmp(mode, "env") == 0) {
    mode = getenv("WORDTOOL_MODE");
    if (mode == NULL) return 2;
  }
  char *word = argv[2];
  if (strcmp(mode, "upper") == 0) {
    words_upper(word);
    puts(word);
  } else if (strcmp(mode, "reverse") == 0) {
    words_reverse(word);
    puts(word);
  } else if (strcmp(mode, "vowels") == 0) {
    printf("%d\n", words_vowels(word));
  } else if (strcmp(mode, "digits") == 0) {
    printf("%d\n", words_digits(word));
  } else {
    return 2;
  }
  return 0;
}
