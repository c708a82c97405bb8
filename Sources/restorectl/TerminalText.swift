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
        case 0x00...0x1F: return true  // C0
        default: return isUnprintableBeyondASCII(scalar)
        }
    }

    /// Whether a scalar from DEL up acts on a terminal or cannot be seen: DEL, a C1 control,
    /// or an invisible format character (Cf: the bidirectional controls U+202A–E, U+2066–9,
    /// U+200E/F and U+061C, zero-width characters…) or line or paragraph separator. Printable
    /// ASCII and C0 answer `false` at once, without asking for the scalar's general category,
    /// a slow lookup: a JSON export of 100,000 nodes (88 MB) spent 10 of its 17 seconds asking
    /// it of ASCII.
    static func isUnprintableBeyondASCII(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00..<0x7F: return false
        case 0x7F...0x9F: return true  // DEL, C1
        default:
            switch scalar.properties.generalCategory {
            case .format, .lineSeparator, .paragraphSeparator: return true
            default: return false
            }
        }
    }
}
