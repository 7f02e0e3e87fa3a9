#if os(Linux) || os(macOS)
    import ArgumentParser
    import Foundation

    /// `serve`'s settings from where service managers keep them: environment variables (`MODELDEPOT_SERVE_PORT=8080`,
    /// `MODELDEPOT_SERVE_ALLOWED_HOST=a,b`, `MODELDEPOT_SERVE_CACHE=true`) and a file (`--config FILE`, lines of
    /// `name = value` named as the flags are, `#` comments, a name repeated for options given more than once). They
    /// become command-line arguments before parsing, so they are validated exactly as flags are; the command line wins
    /// over the environment, which wins over the file.
    enum ServeSettings {
        /// The environment variables' prefix.
        static let prefix = "MODELDEPOT_SERVE_"
        /// `serve`'s flags that take no value: `true`/`false` (also `1`/`0`, `yes`/`no`) say whether each is given.
        static let switches: Set<String> = [
            "cache", "ui", "no-sendfile", "finish-abandoned-pulls", "xet", "xet-uploads", "advertise",
        ]
        /// Options that may be given several times: a comma-separated variable, or the name repeated in the file.
        static let repeatable: Set<String> = ["allowed-host"]

        /// `arguments` (without the program name) with the settings `serve` takes from `environment` and the
        /// `--config` file added; other commands' arguments unchanged.
        ///
        /// - Throws: `ValidationError` naming the variable or line that is wrong, or a file that cannot be read.
        static func expand(_ arguments: [String], environment: [String: String]) throws -> [String] {
            guard arguments.first == "serve" else { return arguments }
            var given = Set(arguments.compactMap(name(ofArgument:)))
            var added: [String] = []
            func add(_ name: String, _ value: String, from source: String) throws {
                guard !name.isEmpty, name.allSatisfy({ $0.isLowercase || $0.isNumber || $0 == "-" }) else {
                    throw ValidationError("\(source) does not name a serve flag.")
                }
                if switches.contains(name) {
                    switch value.lowercased() {
                    case "true", "1", "yes": added.append("--\(name)")
                    case "false", "0", "no": break
                    default:
                        throw ValidationError("\(source): --\(name) is true or false, not '\(value)'.")
                    }
                } else {
                    added += ["--\(name)", value]
                }
            }
            // The environment, where the command line says nothing.
            var fromEnvironment: Set<String> = []
            for (key, value) in environment.sorted(by: { $0.key < $1.key }) where key.hasPrefix(prefix) {
                let name = key.dropFirst(prefix.count).lowercased().replacingOccurrences(of: "_", with: "-")
                guard !given.contains(name) else { continue }
                fromEnvironment.insert(name)
                let values = repeatable.contains(name) ? value.split(separator: ",").map(String.init) : [value]
                for each in values { try add(name, each.trimmingCharacters(in: .whitespaces), from: key) }
            }
            given.formUnion(fromEnvironment)
            // The file, where neither says anything.
            if let path = configPath(in: arguments) ?? environment[prefix + "CONFIG"] {
                guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                    throw ValidationError("Cannot read the settings file \(path) (--config).")
                }
                for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    let line = raw.trimmingCharacters(in: .whitespaces)
                    guard !line.isEmpty, !line.hasPrefix("#") else { continue }
                    let source = "\(path), line \(index + 1)"
                    guard let equals = line.firstIndex(of: "=") else {
                        throw ValidationError("\(source) is not 'name = value'.")
                    }
                    let name = line[..<equals].trimmingCharacters(in: .whitespaces)
                    var value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
                    if value.count >= 2, value.first == "\"", value.last == "\"" {
                        value = String(value.dropFirst().dropLast())
                    }
                    guard name != "config" else {
                        throw ValidationError("\(source): a settings file cannot name another.")
                    }
                    guard !given.contains(name) else { continue }
                    try add(name, value, from: source)
                }
            }
            return arguments + added
        }

        /// `--name` of an argument (`--name` or `--name=value`), nil for values and short flags.
        private static func name(ofArgument argument: String) -> String? {
            guard argument.hasPrefix("--"), argument.count > 2 else { return nil }
            return String(argument.dropFirst(2).prefix { $0 != "=" })
        }

        private static func configPath(in arguments: [String]) -> String? {
            for (index, argument) in arguments.enumerated() {
                if argument == "--config", index + 1 < arguments.count { return arguments[index + 1] }
                if argument.hasPrefix("--config=") { return String(argument.dropFirst("--config=".count)) }
            }
            return nil
        }
    }
#endif
