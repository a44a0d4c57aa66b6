//! Source code read for its annotations or literals (Spring's `@Retryable` in Java or Kotlin, client-go's
//! `wait.Backoff{…}` in Go): only what the compiler compiles counts, so comments are blanked before anything looks
//! for them. A `@Retryable` in a Javadoc example or a commented-out `wait.Backoff{` is no entry.

/// `text` with every comment (`// …` to the end of the line, `/* … */`) replaced by spaces byte for byte, so
/// offsets, lines and columns stay those of the file. String and character literals are kept, a `//` inside one
/// included: `"…"`, `'…'`, Java's and Kotlin's `"""…"""` and Go's raw `` `…` ``.
pub(crate) fn without_comments(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for byte in &mut out[from..to] {
            if *byte != b'\n' {
                *byte = b' ';
            }
        }
    };
    while i < bytes.len() {
        match bytes[i] {
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                let end = bytes[i..].iter().position(|&b| b == b'\n').map_or(bytes.len(), |n| i + n);
                blank(&mut out, i, end);
                i = end;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let end = text[i + 2..].find("*/").map_or(bytes.len(), |n| i + 2 + n + 2);
                blank(&mut out, i, end);
                i = end;
            }
            b'"' if text[i..].starts_with("\"\"\"") => {
                i = text[i + 3..].find("\"\"\"").map_or(bytes.len(), |n| i + 3 + n + 3);
            }
            quote @ (b'"' | b'\'' | b'`') => {
                let mut j = i + 1;
                while j < bytes.len() && bytes[j] != quote && !(quote != b'`' && bytes[j] == b'\n') {
                    j += if bytes[j] == b'\\' && quote != b'`' { 2 } else { 1 };
                }
                i = (j + 1).min(bytes.len());
            }
            _ => i += 1,
        }
    }
    // Only ASCII bytes of comments were replaced by ASCII spaces, and every byte of a multi-byte character in a
    // comment by a space: the result is UTF-8.
    String::from_utf8(out).unwrap_or_else(|_| unreachable!("comments are blanked whole"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_are_blanked_in_place_and_strings_kept() {
        let java = "// @Retryable(maxAttempts = 9)\n/** e.g. {@code @Retryable} — ünïcode */\n@Retryable(label = \"//x\")\nvoid a() {} /* tail";
        let blanked = without_comments(java);
        assert_eq!(blanked.len(), java.len());
        assert_eq!(blanked.lines().count(), java.lines().count());
        assert_eq!(blanked.matches("@Retryable").count(), 1);
        assert!(blanked.contains("@Retryable(label = \"//x\")\nvoid a() {}"), "{blanked}");
        assert!(blanked.lines().next().unwrap().trim().is_empty());
        let go = "b := wait.Backoff{Steps: 5} // wait.Backoff{Steps: 9}\nraw := `// not a comment`\n'\\''\n";
        let blanked = without_comments(go);
        assert_eq!(blanked.matches("Backoff{").count(), 1);
        assert!(blanked.contains("`// not a comment`"));
        let kotlin = "val s = \"\"\"\n// kept\n\"\"\"\n// gone";
        assert!(without_comments(kotlin).contains("// kept") && !without_comments(kotlin).contains("gone"));
    }
}
