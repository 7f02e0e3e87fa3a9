/// The audio container formats transcription servers accept, recognised by their first bytes.
public enum AudioFormat: String, Sendable, Hashable, Codable, CaseIterable {
    /// RIFF/WAVE (PCM or otherwise).
    case wav
    /// Native FLAC (`fLaC`).
    case flac
    /// MPEG audio layer III, with or without an ID3v2 tag in front.
    case mp3
    /// An Ogg stream (Vorbis, Opus or FLAC inside).
    case ogg
    /// An ISO base media file with audio (`ftyp` box: M4A, MP4).
    case m4a
    /// Matroska/WebM (EBML header).
    case webm

    /// How many leading bytes ``sniff(_:)`` may look at.
    public static let bytesNeededToSniff = 4096

    /// The usual file extension, without the dot.
    public var fileExtension: String { rawValue }

    /// The media type uploads declare.
    public var mediaType: String {
        switch self {
        case .wav: "audio/wav"
        case .flac: "audio/flac"
        case .mp3: "audio/mpeg"
        case .ogg: "audio/ogg"
        case .m4a: "audio/mp4"
        case .webm: "audio/webm"
        }
    }

    /// The format `bytes` (the start of a file) are in, or nil when they are none of these.
    public static func sniff<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> AudioFormat? {
        let head = Array(bytes.prefix(bytesNeededToSniff))
        func matches(_ ascii: String, at offset: Int = 0) -> Bool {
            let expected = Array(ascii.utf8)
            return head.count >= offset + expected.count && Array(head[offset..<offset + expected.count]) == expected
        }
        if matches("RIFF"), matches("WAVE", at: 8) { return .wav }
        if matches("fLaC") { return .flac }
        if matches("OggS") { return .ogg }
        if matches("ftyp", at: 4) { return .m4a }
        if head.starts(with: [0x1A, 0x45, 0xDF, 0xA3]) { return .webm }
        if matches("ID3") {
            // ID3v2: 10-byte header whose last four bytes are a 28-bit "synchsafe" size; the MPEG frame follows.
            guard head.count >= 10 else { return nil }
            let size = head[6..<10].reduce(0) { ($0 << 7) | Int($1 & 0x7F) }
            let frame = 10 + size + ((head[5] & 0x10) != 0 ? 10 : 0)
            // A tag longer than the sniffed bytes: trust the tag, which only MP3 (and a few AAC streams) carry.
            guard frame + 1 < head.count else { return .mp3 }
            return isMPEGFrameHeader(head[frame], head[frame + 1]) ? .mp3 : nil
        }
        if head.count >= 4, isMPEGFrameHeader(head[0], head[1]), isPlausibleMPEGFrame(head[2]) { return .mp3 }
        return nil
    }

    /// An MPEG audio frame sync (11 bits set) with layer III.
    private static func isMPEGFrameHeader(_ first: UInt8, _ second: UInt8) -> Bool {
        first == 0xFF && (second & 0xE0) == 0xE0 && (second & 0x06) == 0x02 && (second & 0x18) != 0x08
    }

    /// A bitrate index that is not "bad" (15) and a sample-rate index that is not reserved (3): random bytes that
    /// happen to start with a sync word are rarely this tidy.
    private static func isPlausibleMPEGFrame(_ third: UInt8) -> Bool {
        (third >> 4) != 0x0F && ((third >> 2) & 0x03) != 0x03
    }
}
