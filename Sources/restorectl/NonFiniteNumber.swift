/// How `restorectl` writes a number that is not finite, in text and in JSON alike: `NaN`,
/// `+Infinity`, `-Infinity`. A date that is not a number is written so too (``Timestamp``).
/// Swift's own descriptions (`nan`, `inf`, `-inf`) made the text say what the JSON said
/// otherwise.
enum NonFiniteNumber {
    static let notANumber = "NaN"
    static let positiveInfinity = "+Infinity"
    static let negativeInfinity = "-Infinity"

    /// `value` as text: its shortest form when finite, one of the three words otherwise.
    static func text<Number: BinaryFloatingPoint & LosslessStringConvertible>(_ value: Number) -> String {
        if value.isNaN { return notANumber }
        if value.isInfinite { return value > 0 ? positiveInfinity : negativeInfinity }
        return value.description
    }
}
