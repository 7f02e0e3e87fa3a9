/// Something that turns speech into text: a local transcription server, a cloud API
/// (`OpenAICompatibleTranscriber`), or an on-device runtime. Code written against it works with any of them.
///
/// ```swift
/// func subtitles(for recording: URL, with transcriber: any Transcriber) async throws -> String {
///     let transcript = try await transcriber.transcribe(try AudioInput(contentsOf: recording), options: .init())
///     return transcript.rendered(as: .srt)
/// }
/// ```
public protocol Transcriber: Sendable {
    /// The speech in `audio` as text with its timings. Throws when the audio is empty, damaged or not a format
    /// the transcriber reads, and when no speech is found in it.
    func transcribe(_ audio: AudioInput, options: TranscriptionOptions) async throws -> Transcript
}
