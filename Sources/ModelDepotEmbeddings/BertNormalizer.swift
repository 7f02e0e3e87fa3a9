import Foundation

/// BERT's text normalisation, as Hugging Face's `tokenizers` applies it (`BertNormalizer`): drop control
/// characters and map whitespace to spaces, put spaces around CJK ideographs, strip accents, lowercase.
/// Everything works on Unicode scalars, as the reference does on Rust `char`s (Swift's `Character` is a
/// grapheme cluster, which would merge what BERT keeps apart).
struct BertNormalizer: Sendable, Equatable {
    var cleanText = true
    var handleChineseCharacters = true
    /// Nil: strip accents exactly when lowercasing (the reference's default).
    var stripAccents: Bool?
    var lowercase = true

    func normalize(_ text: String) -> String.UnicodeScalarView {
        var scalars = String.UnicodeScalarView()
        scalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            if cleanText {
                if scalar.value == 0 || scalar.value == 0xFFFD || Self.isControl(scalar) { continue }
                if Self.isWhitespace(scalar) {
                    scalars.append(" ")
                    continue
                }
            }
            if handleChineseCharacters && Self.isChineseCharacter(scalar) {
                scalars.append(" ")
                scalars.append(scalar)
                scalars.append(" ")
            } else {
                scalars.append(scalar)
            }
        }
        if stripAccents ?? lowercase {
            let decomposed = String(scalars).decomposedStringWithCanonicalMapping.unicodeScalars
            scalars = String.UnicodeScalarView(decomposed.filter { $0.properties.generalCategory != .nonspacingMark })
        }
        if lowercase {
            // Scalar by scalar, as Rust's `char::to_lowercase`: no context rules (a final sigma stays σ).
            var lowered = String.UnicodeScalarView()
            lowered.reserveCapacity(scalars.count)
            for scalar in scalars {
                if scalar.properties.changesWhenLowercased {
                    lowered.append(contentsOf: scalar.properties.lowercaseMapping.unicodeScalars)
                } else {
                    lowered.append(scalar)
                }
            }
            scalars = lowered
        }
        return scalars
    }

    /// Tab, newline and carriage return count as whitespace; other `Cc`, `Cf`, `Cn`, `Co`, `Cs` as control.
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "\t", "\n", "\r": return false
        default:
            switch scalar.properties.generalCategory {
            case .control, .format, .unassigned, .privateUse, .surrogate: return true
            default: return false
            }
        }
    }

    /// The Unicode `White_Space` property (Rust's `char::is_whitespace`).
    static func isWhitespace(_ scalar: Unicode.Scalar) -> Bool { scalar.properties.isWhitespace }

    /// The CJK Unified Ideographs blocks and their extensions and compatibility forms — the ranges BERT's
    /// reference code lists (not Hangul, Hiragana or Katakana, which are split like other letters).
    static func isChineseCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x4E00...0x9FFF, 0x3400...0x4DBF, 0x20000...0x2A6DF, 0x2A700...0x2B73F, 0x2B740...0x2B81F,
            0x2B920...0x2CEAF, 0xF900...0xFAFF, 0x2F800...0x2FA1F:
            return true
        default: return false
        }
    }
}

/// BERT's pre-tokenizer (`BertPreTokenizer`): words are split at whitespace, which is dropped, and every
/// punctuation character — ASCII punctuation or a Unicode `P*` category — becomes a word of its own.
enum BertPreTokenizer {
    static func words(in scalars: String.UnicodeScalarView) -> [[Unicode.Scalar]] {
        var words: [[Unicode.Scalar]] = []
        var current: [Unicode.Scalar] = []
        for scalar in scalars {
            if BertNormalizer.isWhitespace(scalar) {
                if !current.isEmpty { words.append(current) }
                current = []
            } else if isPunctuation(scalar) {
                if !current.isEmpty { words.append(current) }
                current = []
                words.append([scalar])
            } else {
                current.append(scalar)
            }
        }
        if !current.isEmpty { words.append(current) }
        return words
    }

    static func isPunctuation(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.isASCII {
            switch scalar.value {
            case 33...47, 58...64, 91...96, 123...126: return true
            default: return false
            }
        }
        switch scalar.properties.generalCategory {
        case .connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation, .initialPunctuation,
            .finalPunctuation, .otherPunctuation:
            return true
        default: return false
        }
    }
}
