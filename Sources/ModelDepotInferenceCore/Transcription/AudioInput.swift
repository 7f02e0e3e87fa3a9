import Foundation
import ModelDepotCore

/// Audio to transcribe: its bytes, a name for messages and uploads, and its format as the bytes show it.
///
/// The format is judged from the bytes, never from the file name: a FLAC file saved as `talk.wav` is sent as
/// FLAC, and a text file renamed `talk.mp3` is refused before anything is uploaded.
public struct AudioInput: Sendable {
    /// The encoded audio, as read (files are memory-mapped, not copied).
    public let data: Data
    /// The file name uploads carry and messages show (`talk.wav`, `stdin`).
    public let name: String
    /// What the bytes are, or nil when they are no audio format ModelDepot recognises.
    public let format: AudioFormat?

    /// Audio held in memory; `name` is only for messages and the upload's file name.
    public init(data: Data, name: String = "audio") {
        self.data = data
        self.name = name
        self.format = AudioFormat.sniff(data.prefix(AudioFormat.bytesNeededToSniff))
    }

    /// The audio in a file, memory-mapped.
    public init(contentsOf file: URL) throws {
        let data: Data
        do {
            data = try Data(contentsOf: file, options: .alwaysMapped)
        } catch {
            throw ModelDepotError(
                .fileSystem, "Cannot read the audio file \(file.path): \(error.localizedDescription)",
                underlying: error)
        }
        self.init(data: data, name: file.lastPathComponent)
    }

    /// The upload's file name: the given name with the extension the bytes call for, so a server that looks at
    /// the extension (OpenAI's does) is told the truth.
    public var uploadName: String {
        guard let format else { return name }
        let stem = (name as NSString).deletingPathExtension
        return (stem.isEmpty ? "audio" : stem) + "." + format.fileExtension
    }
}
