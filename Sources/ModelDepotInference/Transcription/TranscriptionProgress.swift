/// How far a transcription has come, told after each piece of a recording that had to be cut.
public struct TranscriptionProgress: Sendable, Equatable {
    /// Pieces transcribed so far, and how many there are (1 when the audio went up whole).
    public var piecesDone: Int
    public var pieces: Int
    /// Seconds of audio transcribed so far, and the whole length, when known.
    public var secondsDone: Double
    public var duration: Double?

    public init(piecesDone: Int, pieces: Int, secondsDone: Double, duration: Double?) {
        self.piecesDone = piecesDone
        self.pieces = pieces
        self.secondsDone = secondsDone
        self.duration = duration
    }
}
