#if canImport(Darwin)
    // Apple platforms only, and never compiled on the machine this package is tested on (Linux): the glue between
    // a background URLSession and ``BackgroundTransfer``, which holds every decision and is tested there through
    // the same calls this delegate makes. Each Apple API used is named where it is used.
    import Foundation

    /// Downloads the system carries on while the app is suspended or terminated: one background `URLSession` per
    /// app, each file fetched as pieces whose bookkeeping (``BackgroundTransfer``) survives relaunches.
    ///
    /// The app must create it once at launch (before the system delivers events), and forward
    /// `application(_:handleEventsForBackgroundURLSession:completionHandler:)` to
    /// ``handleEvents(forSession:completionHandler:)``. See the article "Downloading while the app is suspended".
    public final class BackgroundDownloads: NSObject, URLSessionDownloadDelegate, @unchecked Sendable {
        // @unchecked: every mutable field is behind `lock`; URLSession calls the delegate on its own queue.
        private let lock = NSLock()
        private var transfers: [String: BackgroundTransfer] = [:]
        /// Which transfer each task belongs to (by destination path), through both of its delegate calls.
        private var owners: [Int: String] = [:]
        private var systemCompletion: (() -> Void)?
        private let destinations: [URL]
        private var session: URLSession!

        /// Called with each file once it is complete and verified, or with the error that stopped it.
        public var onFinished: (@Sendable (URL, Result<URL, any Error>) -> Void)?

        /// The app's background session `identifier` (`URLSessionConfiguration.background(withIdentifier:)`).
        /// `discretionary` lets the system pick a good moment (`isDiscretionary`: on Wi-Fi and power), for
        /// prefetching; `policy` carries part 1's network rules (`allowsExpensiveNetworkAccess`,
        /// `allowsConstrainedNetworkAccess`). `destinations` are the files of earlier launches to pick up again.
        public init(
            identifier: String, discretionary: Bool = false, policy: NetworkPolicy = NetworkPolicy(),
            resuming destinations: [URL] = []
        ) {
            self.destinations = destinations
            super.init()
            let configuration = URLSessionConfiguration.background(withIdentifier: identifier)
            configuration.isDiscretionary = discretionary
            // URLSessionConfiguration.sessionSendsLaunchEvents: relaunch the app in the background when tasks end.
            configuration.sessionSendsLaunchEvents = true
            configuration.allowsExpensiveNetworkAccess = policy.allowsExpensive
            configuration.allowsConstrainedNetworkAccess = policy.allowsConstrained
            configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
            for destination in destinations {
                if let transfer = try? BackgroundTransfer.load(for: destination) {
                    transfers[destination.path] = transfer
                    for task in transfer.tasksOut { owners[task] = destination.path }
                }
            }
            // URLSession(configuration:delegate:delegateQueue:) with the same identifier reattaches to the tasks
            // the system kept running while the app was gone.
            session = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
        }

        /// Starts (or continues) downloading `url` to `destination`: `size` bytes whose SHA-256 is `sha256`, of
        /// the file the validator `etag` names (from the Hub's metadata).
        public func download(url: URL, to destination: URL, size: Int64, sha256: String, etag: String) throws {
            var transfer =
                lock.withLock { transfers[destination.path] }
                ?? BackgroundTransfer(url: url, destination: destination, size: size, sha256: sha256, etag: etag)
            for request in transfer.requestsToStart() {
                var outgoing = URLRequest(url: request.url)
                for (name, value) in request.headers { outgoing.setValue(value, forHTTPHeaderField: name) }
                // URLSession.downloadTask(with:): the system writes the body to a file of its own.
                let task = session.downloadTask(with: outgoing)
                // URLSessionTask.countOfBytesClientExpectsToReceive: lets the system schedule the task well.
                task.countOfBytesClientExpectsToReceive = request.expectedBytes
                transfer.assign(task: task.taskIdentifier, to: request.piece)
                lock.withLock { owners[task.taskIdentifier] = destination.path }
                task.resume()
            }
            try transfer.save()
            lock.withLock { transfers[destination.path] = transfer }
        }

        /// Forward `UIApplicationDelegate.application(_:handleEventsForBackgroundURLSession:completionHandler:)`
        /// here; the handler is called once the session has delivered every event.
        public func handleEvents(forSession identifier: String, completionHandler: @escaping () -> Void) {
            lock.withLock { systemCompletion = completionHandler }
        }

        // URLSessionDownloadDelegate.urlSession(_:downloadTask:didFinishDownloadingTo:): the file at `location`
        // is deleted when this returns, so the piece is spliced before.
        public func urlSession(
            _ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL
        ) {
            let response = downloadTask.response as? HTTPURLResponse
            var headers: [String: String] = [:]
            for (key, value) in response?.allHeaderFields ?? [:] {
                if let key = key as? String { headers[key] = "\(value)" }
            }
            lock.withLock {
                guard let key = owners[downloadTask.taskIdentifier], var transfer = transfers[key] else { return }
                _ = try? transfer.finished(
                    task: downloadTask.taskIdentifier, status: response?.statusCode ?? 0, headers: headers,
                    location: location)
                try? transfer.save()
                transfers[key] = transfer
            }
        }

        // URLSessionTaskDelegate.urlSession(_:task:didCompleteWithError:): a failed piece is asked for again; a
        // transfer whose pieces are all in is verified and placed.
        public func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            let finished: (URL, Result<URL, any Error>)? = lock.withLock {
                guard let key = owners.removeValue(forKey: task.taskIdentifier), var transfer = transfers[key] else {
                    return nil
                }
                if error != nil { transfer.failed(task: task.taskIdentifier) }
                guard transfer.isComplete else {
                    try? transfer.save()
                    transfers[key] = transfer
                    return nil
                }
                let result = Result { try transfer.finish() }
                if case .failure = result {
                    // Not the expected bytes: nothing was placed, and every piece will be asked for again.
                    try? transfer.save()
                    transfers[key] = transfer
                } else {
                    transfers[key] = nil
                }
                return (transfer.destination, result)
            }
            if let (destination, result) = finished { onFinished?(destination, result) }
            // Pieces refused or failed are asked for again.
            for transfer in lock.withLock({ Array(transfers.values) }) where !transfer.requestsToStart().isEmpty {
                try? download(
                    url: transfer.url, to: transfer.destination, size: transfer.size, sha256: transfer.sha256,
                    etag: transfer.etag)
            }
        }

        // URLSessionDelegate.urlSessionDidFinishEvents(forBackgroundURLSession:): every event of this launch is in;
        // the system's completion handler must run on the main queue.
        public func urlSessionDidFinishEvents(forBackgroundURLSession session: URLSession) {
            let completion = lock.withLock {
                defer { systemCompletion = nil }
                return systemCompletion
            }
            if let completion { DispatchQueue.main.async { completion() } }
        }
    }
#endif
