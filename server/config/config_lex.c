/* server/config/config_lex.c: splitting a config line into words, with openvpn 2.6's rules
 * (src/openvpn/options.c, parse_line):
 *
 * - words are separated by blanks (isspace); "..." and '...' quote a word, and a quote closes
 *   the word even when more text follows ("a"b is two words);
 * - outside single quotes a backslash escapes the next character, which must be a backslash,
 *   a double quote or a blank (anything else is an error, so Windows paths need "\\");
 * - '#' or ';' where a word could start ends the line, even after a backslash;
 * - a word holds at most 256 characters and a line at most 16 words.
 */
#include "server/config/config_internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>

enum lex_state { LEX_BETWEEN, LEX_PLAIN, LEX_DQUOTED, LEX_SQUOTED };

static bool is_blank(char c)
{
    return c == '\0' || isspace((unsigned char)c);
}

size_t config_first_word(const char *line, size_t line_len, const char **start)
{
    size_t at = 0, n = 0;

    while (at < line_len && (line[at] == ' ' || line[at] == '\t')) {
        at++;
    }
    if (line_len - at >= 2 && line[at] == '-' && line[at + 1] == '-') {
        at += 2;
    }
    while (at + n < line_len && line[at + n] != ' ' && line[at + n] != '\t' &&
           line[at + n] != '"' && line[at + n] != '\'') {
        n++;
    }
    *start = line + at;
    return n < 64 ? n : 0;
}

int config_split_line(const char *line, size_t line_len, char *scratch, char **argv, int *argc,
                      char *why, size_t why_len)
{
    enum lex_state state = LEX_BETWEEN;
    bool escaped = false;
    size_t out_len = 0, word_len = 0;
    char *word = scratch;

    *argc = 0;
    for (size_t i = 0; i <= line_len; i++) {
        char c = i < line_len ? line[i] : '\0';
        char out = '\0';
        bool is_word_end = false;

        if (!escaped && c == '\\' && state != LEX_SQUOTED) {
            escaped = true;
            continue;
        }
        switch (state) {
        case LEX_BETWEEN:
            if (is_blank(c)) {
                break;
            }
            if (c == '#' || c == ';') {
                i = line_len; /* comment: nothing more on this line */
                break;
            }
            if (!escaped && c == '"') {
                state = LEX_DQUOTED;
            } else if (!escaped && c == '\'') {
                state = LEX_SQUOTED;
            } else {
                out = c;
                state = LEX_PLAIN;
            }
            break;
        case LEX_PLAIN:
            if (!escaped && is_blank(c)) {
                is_word_end = true;
            } else {
                out = c;
            }
            break;
        case LEX_DQUOTED:
            if (!escaped && c == '"') {
                is_word_end = true;
            } else {
                out = c;
            }
            break;
        case LEX_SQUOTED:
            if (c == '\'') {
                is_word_end = true;
            } else {
                out = c;
            }
            break;
        }
        if (escaped && out != '\0' && out != '\\' && out != '"' && !is_blank(out)) {
            snprintf(why, why_len,
                     "bad backslash ('\\') usage: a backslash may only escape '\\', '\"' or a "
                     "blank (write a Windows path as \"c:\\\\dir\\\\file\")");
            return -EINVAL;
        }
        escaped = false;
        if (out != '\0') {
            if (word_len >= CONFIG_MAX_ARG_LEN) {
                snprintf(why, why_len, "a word is too long (%d characters max)",
                         CONFIG_MAX_ARG_LEN);
                return -EINVAL;
            }
            word[word_len++] = out;
        }
        if (is_word_end) {
            if (*argc >= CONFIG_MAX_ARGS) {
                snprintf(why, why_len, "too many words on one line (%d max)", CONFIG_MAX_ARGS);
                return -EINVAL;
            }
            word[word_len] = '\0';
            argv[(*argc)++] = word;
            out_len += word_len + 1;
            word = scratch + out_len;
            word_len = 0;
            state = LEX_BETWEEN;
        }
    }
    if (state == LEX_DQUOTED) {
        snprintf(why, why_len, "no closing quotation (\")");
        return -EINVAL;
    }
    if (state == LEX_SQUOTED) {
        snprintf(why, why_len, "no closing single quotation (')");
        return -EINVAL;
    }
    if (state != LEX_BETWEEN || escaped) {
        snprintf(why, why_len, "a backslash ends the line");
        return -EINVAL;
    }
    return 0;
}
