/// Cuts a long recording into pieces no larger than an upload limit, each cut in the middle of the longest
/// quiet stretch near its end, so that no word is cut in two when there is a pause to cut in.
struct QuietSplitter {
    /// A piece: which frames, and where it starts in the recording, in seconds.
    struct Piece: Equatable {
        var frames: Range<Int>
        var start: Double
    }

    /// The loudness is judged over windows this long.
    var window: Double = 0.05
    /// The cut is looked for this far before an even share of what is left (and half as far after it), as a
    /// fraction of the largest piece.
    var searchFraction: Double = 0.3

    /// Pieces of `wave` of at most `maximumBytes` each as WAVE files (header included).
    func pieces(of wave: WaveFile, maximumBytes: Int) -> [Piece] {
        let maximumFrames = max(1, (maximumBytes - WaveFile.headerSize) / wave.blockAlign)
        let windowFrames = max(1, Int(Double(wave.sampleRate) * window))
        var pieces: [Piece] = []
        var start = 0
        while start < wave.frameCount {
            let remaining = wave.frameCount - start
            guard remaining > maximumFrames else {
                pieces.append(Piece(frames: start..<wave.frameCount, start: Double(start) / Double(wave.sampleRate)))
                break
            }
            // Pieces of about equal length: a short last piece of near silence is where Whisper invents text.
            let piecesLeft = (remaining + maximumFrames - 1) / maximumFrames
            let target = start + remaining / piecesLeft
            let reach = Int(Double(maximumFrames) * searchFraction)
            let limit = min(start + maximumFrames, target + reach / 2)
            // Never so early that what is left needs one more piece than planned.
            let latestFit = wave.frameCount - (piecesLeft - 1) * maximumFrames
            let searchStart = max(start + 1, target - reach, latestFit)
            let cut = quietestPause(in: wave, from: searchStart, to: limit, windowFrames: windowFrames) ?? limit
            pieces.append(Piece(frames: start..<cut, start: Double(start) / Double(wave.sampleRate)))
            start = cut
        }
        return pieces
    }

    /// The middle of the longest quiet run of windows between `from` and `to`: a pause between sentences
    /// outlasts the silent closure of a `k` or `t` inside a word, which is as quiet but shorter. Quiet means
    /// within a tenth of the way from the quietest window to the median one (recordings have a noise floor).
    private func quietestPause(in wave: WaveFile, from: Int, to limit: Int, windowFrames: Int) -> Int? {
        let starts = Array(stride(from: from, through: limit - windowFrames, by: windowFrames))
        guard !starts.isEmpty else { return nil }
        let loudness = starts.map { wave.loudness($0..<$0 + windowFrames) }
        let sorted = loudness.sorted()
        let threshold = sorted[0] + (sorted[sorted.count / 2] - sorted[0]) / 10
        var best: (first: Int, count: Int)?
        var run: (first: Int, count: Int)?
        for (index, value) in loudness.enumerated() {
            if value <= threshold {
                run = run.map { ($0.first, $0.count + 1) } ?? (index, 1)
                // Later wins ties, so pieces stay as long as they may.
                if let current = run, current.count >= (best?.count ?? 0) { best = current }
            } else {
                run = nil
            }
        }
        guard let best else { return nil }
        let firstFrame = starts[best.first]
        let lastFrame = starts[best.first + best.count - 1] + windowFrames
        return (firstFrame + lastFrame) / 2
    }
}
