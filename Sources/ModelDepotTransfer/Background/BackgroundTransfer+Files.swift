import Foundation
import ModelDepotCore

/// Where a background transfer keeps its bytes and its record, and how it reads and writes them.
extension BackgroundTransfer {
    /// Where the bytes gather until the file is complete and verified.
    package var partialFile: URL { destination.appendingPathExtension("background") }
    /// Where this record is kept, beside the partial file.
    package var recordFile: URL { destination.appendingPathExtension("background.json") }

    /// Writes the record next to the partial file, atomically.
    package func save() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try encoder.encode(self).write(to: recordFile, options: .atomic)
    }

    /// The record a previous launch saved for `destination`, if any.
    package static func load(for destination: URL) throws -> BackgroundTransfer? {
        let file = destination.appendingPathExtension("background.json")
        guard let data = FileManager.default.contents(atPath: file.path) else { return nil }
        do {
            return try JSONDecoder().decode(BackgroundTransfer.self, from: data)
        } catch {
            throw ModelDepotError(.fileSystem, "The background download record \(file.path) is damaged: \(error).")
        }
    }

    /// Copies the piece's bytes into the partial file at `offset`.
    func splice(_ location: URL, at offset: Int64) throws {
        if !FileManager.default.fileExists(atPath: partialFile.path) {
            guard FileManager.default.createFile(atPath: partialFile.path, contents: nil) else {
                throw ModelDepotError(.fileSystem, "Cannot create \(partialFile.path).")
            }
        }
        let output = try FileHandle(forWritingTo: partialFile)
        defer { try? output.close() }
        let input = try FileHandle(forReadingFrom: location)
        defer { try? input.close() }
        try output.seek(toOffset: UInt64(offset))
        while let chunk = try input.read(upToCount: 4 << 20), !chunk.isEmpty {
            try output.write(contentsOf: chunk)
        }
    }
}
