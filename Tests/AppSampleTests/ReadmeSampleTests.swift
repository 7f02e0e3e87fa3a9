import Foundation
import ModelDepot
import Testing

/// README.md's Swift sample, compiled here with `import ModelDepot` alone, and the README checked to show exactly
/// this text: a sample that stops compiling fails the build, and one edited in only one place fails the test.
enum ReadmeSample {
    static func buildItIntoAnApp() async throws {
        // README sample begins
        let models = try ModelManager()  // cache, endpoint and token as the environment names them
        let repo = try RepoID("Qwen/Qwen2.5-0.5B-Instruct-GGUF")
        let task = await models.download(repo, matching: ["*q4_k_m.gguf"])  // asking again joins the same task
        for await progress in task.progress {
            print(progress.fractionCompleted ?? 0)  // bytes, files, speed, ETA
        }
        let snapshot = try await task.result()
        print(snapshot.folder.path)
        // README sample ends
    }
}

@Suite struct ReadmeSampleTests {
    @Test func theReadmeShowsTheCompiledSample() throws {
        let here = URL(fileURLWithPath: #filePath)
        let root = here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let source = try String(contentsOf: here, encoding: .utf8)

        let sampleLines = source.components(separatedBy: "\n")
            .drop { !$0.contains("// README sample begins") }.dropFirst()
            .prefix { !$0.contains("// README sample ends") }
        let indent = sampleLines.first?.prefix { $0 == " " }.count ?? 0
        let sample = sampleLines.map { String($0.dropFirst(indent)) }

        let readmeLines = readme.components(separatedBy: "\n")
        let block = readmeLines.drop { $0 != "```swift" }.dropFirst().prefix { $0 != "```" }
        #expect(block.first == "import ModelDepot")
        // The README's block is `import ModelDepot`, a blank line, then the sample.
        #expect(Array(block.dropFirst(2)) == sample, "README.md's Swift sample differs from the compiled one")
    }
}
