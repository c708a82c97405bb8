/// Makes text from an archive safe to print on a terminal.
///
/// Archives hold whatever apps and users typed. Printed raw, an ESC or a C1 control such as
/// U+009B (CSI) could move the cursor, rewrite the screen or retitle the window, and a
/// bidirectional override such as U+202E could make text read differently from what it is.
enum TerminalText {
    /// Replaces control characters (C0, DEL, C1), bidirectional formatting characters and
    /// other invisible format characters with a visible `\u{XXXX}` escape; a backslash
    /// becomes `\\` so that an escape in the output always means an escape.
    static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            if scalar == "\\" {
                result.append("\\\\")
            } else if needsEscape(scalar) {
                result.append("\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}")
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// A reason an app or a person gave (for a discard, an invalidation, a refusal), escaped;
    /// one that is blank says so rather than printing nothing after a colon.
    static func escapedReason(_ reason: String) -> String {
        escaped(shownReason(reason))
    }

    /// A reason as shown, not escaped (for text escaped later): one that is blank says so.
    static func shownReason(_ reason: String) -> String {
        isBlank(reason) ? "no reason given" : reason
    }

    /// Whether a reason says nothing: empty, or only white space. Asked of each scalar: a
    /// space followed by a combining mark is one `Character` that `isWhitespace` calls white
    /// space by its first scalar, yet it shows a mark.
    static func isBlank(_ reason: String) -> Bool {
        reason.unicodeScalars.allSatisfy(\.properties.isWhitespace)
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x5C: return true  // backslash, so escapes stay unambiguous
        case 0x00...0x1F, 0x7F...0x9F: return true  // C0, DEL, C1
        default:
            // Cf: bidi controls (U+202A–E, U+2066–9, U+200E/F, U+061C), zero-width characters…
            return scalar.properties.generalCategory == .format
                || scalar.properties.generalCategory == .lineSeparator
                || scalar.properties.generalCategory == .paragraphSeparator
        }
    }
}
