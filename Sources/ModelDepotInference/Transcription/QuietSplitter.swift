/// Cuts a long recording into pieces no larger than an upload limit, each cut in the quietest stretch near its
/// end, so that no word is cut in two when there is a pause to cut in.
struct QuietSplitter {
    /// A piece: which frames, and where it starts in the recording, in seconds.
    struct Piece: Equatable {
        var frames: Range<Int>
        var start: Double
    }

    /// The loudness is judged over windows this long.
    var window: Double = 0.05
    /// The cut is looked for in the last part of each piece this long, as a fraction of the largest piece.
    var searchFraction: Double = 0.3

    /// Pieces of `wave` of at most `maximumBytes` each as WAVE files (header included).
    func pieces(of wave: WaveFile, maximumBytes: Int) -> [Piece] {
        let maximumFrames = max(1, (maximumBytes - WaveFile.headerSize) / wave.blockAlign)
        let windowFrames = max(1, Int(Double(wave.sampleRate) * window))
        var pieces: [Piece] = []
        var start = 0
        while start < wave.frameCount {
            let limit = start + maximumFrames
            guard limit < wave.frameCount else {
                pieces.append(Piece(frames: start..<wave.frameCount, start: Double(start) / Double(wave.sampleRate)))
                break
            }
            let searchStart = max(start + 1, limit - Int(Double(maximumFrames) * searchFraction))
            var cut = limit
            var quietest = Double.infinity
            var windowStart = searchStart
            while windowStart + windowFrames <= limit {
                let loudness = wave.loudness(windowStart..<windowStart + windowFrames)
                // Later wins ties, so pieces stay as long as they may.
                if loudness <= quietest {
                    quietest = loudness
                    cut = windowStart + windowFrames / 2
                }
                windowStart += windowFrames
            }
            pieces.append(Piece(frames: start..<cut, start: Double(start) / Double(wave.sampleRate)))
            start = cut
        }
        return pieces
    }
}
