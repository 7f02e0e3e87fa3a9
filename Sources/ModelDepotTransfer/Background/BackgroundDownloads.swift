#if canImport(Darwin)
    // Apple platforms only, and never compiled on the machine this package is tested on (Linux): the glue between
    // a background URLSession and ``BackgroundSessionState``, which holds every decision and is tested there through
    // the same calls this delegate makes. Each Apple API used is named where it is used.
    import Foundation
    import Synchronization

    /// Downloads the system carries on while the app is suspended or terminated: one background `URLSession` per
    /// app, each file fetched as pieces whose bookkeeping (`BackgroundTransfer`) survives relaunches.
    ///
    /// The app must create it once at launch (before the system delivers events), and forward
    /// `application(_:handleEventsForBackgroundURLSession:completionHandler:)` to
    /// ``handleEvents(forSession:completionHandler:)``. See the article "Downloading while the app is suspended".
    public final class BackgroundDownloads: NSObject, URLSessionDownloadDelegate, Sendable {
        /// Told of each file placed and verified (its destination and final URL), or failed with the reason.
        public typealias Finished = @Sendable (URL, Result<URL, any Error>) -> Void

        private let tasks: SessionTasks
        private let state: BackgroundSessionState
        /// The delegate queue: serial, so the delegate's calls and the app's requests reach the state one at a time
        /// and never wait on the app's main thread.
        private let queue: OperationQueue
        private let onFinished: BackgroundSessionState.Finished

        /// The app's background session `identifier` (`URLSessionConfiguration.background(withIdentifier:)`).
        /// `discretionary` lets the system pick a good moment (`isDiscretionary`: on Wi-Fi and power), for
        /// prefetching; `policy` carries the network rules (`allowsExpensiveNetworkAccess`,
        /// `allowsConstrainedNetworkAccess`). `destinations` are the files of earlier launches to pick up again;
        /// `onFinished` hears of each file placed and verified, or failed with the reason (on the delegate queue).
        public init(
            identifier: String, discretionary: Bool = false, policy: NetworkPolicy = NetworkPolicy(),
            resuming destinations: [URL] = [], onFinished: @escaping Finished
        ) {
            self.onFinished = onFinished
            queue = OperationQueue()
            queue.maxConcurrentOperationCount = 1
            queue.name = "ModelDepot background downloads"
            tasks = SessionTasks()
            state = BackgroundSessionState(system: tasks, resuming: destinations, onFinished: onFinished)
            super.init()
            let configuration = URLSessionConfiguration.background(withIdentifier: identifier)
            configuration.isDiscretionary = discretionary
            // URLSessionConfiguration.sessionSendsLaunchEvents: relaunch the app in the background when tasks end.
            configuration.sessionSendsLaunchEvents = true
            configuration.allowsExpensiveNetworkAccess = policy.allowsExpensive
            configuration.allowsConstrainedNetworkAccess = policy.allowsConstrained
            configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
            // URLSession(configuration:delegate:delegateQueue:) with the same identifier reattaches to the tasks
            // the system kept running while the app was gone; their events wait (OperationQueue.isSuspended) until
            // the session is known to the task table.
            queue.isSuspended = true
            let session = URLSession(configuration: configuration, delegate: self, delegateQueue: queue)
            tasks.attach(session)
            queue.isSuspended = false
            // URLSession.getAllTasks(completionHandler:): what the system still runs, against the records.
            session.getAllTasks { [state, queue] running in
                let identifiers = running.map(\.taskIdentifier)
                queue.addOperation { state.reconcile(runningTasks: identifiers) }
            }
        }

        /// Starts (or goes on with) downloading `url` to `destination`: `size` bytes whose SHA-256 is `sha256`.
        /// `url` must not need credentials (background tasks follow redirects on their own): for a gated file, hand
        /// over the signed link the Hub redirects to. Returns at once; the outcome reaches `onFinished`.
        public func download(url: URL, to destination: URL, size: Int64, sha256: String) {
            queue.addOperation { [state, onFinished] in
                do {
                    try state.download(url: url, to: destination, size: size, sha256: sha256)
                } catch {
                    onFinished(destination, .failure(error))
                }
            }
        }

        /// Goes on with files another download left unfinished (`ContinuedProcessing.handOver(_:to:pieceSize:)`):
        /// the ranges it completed are kept. Returns at once; failures reach `onFinished`.
        public func handOver(_ files: [ContinuedProcessing.UnfinishedFile]) {
            queue.addOperation { [state, onFinished] in
                do {
                    try ContinuedProcessing.handOver(files, to: state)
                } catch {
                    for file in files { onFinished(file.destination, .failure(error)) }
                }
            }
        }

        /// Forward `UIApplicationDelegate.application(_:handleEventsForBackgroundURLSession:completionHandler:)`
        /// here; the handler is called once the session has delivered every event, also when it said so first.
        public func handleEvents(forSession identifier: String, completionHandler: @escaping @Sendable () -> Void) {
            // The system's handler must run on the main queue (the app delegate method's documentation).
            state.handleEvents { DispatchQueue.main.async { completionHandler() } }
        }

        // URLSessionDownloadDelegate.urlSession(_:downloadTask:didFinishDownloadingTo:): called for error statuses
        // too; the file at `location` is deleted when this returns, so the piece is spliced before.
        public func urlSession(
            _ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL
        ) {
            // URLSessionTask.response: the last response, after the redirects a background session always follows.
            let response = downloadTask.response as? HTTPURLResponse
            var headers: [String: String] = [:]
            for (key, value) in response?.allHeaderFields ?? [:] {
                if let key = key as? String { headers[key] = "\(value)" }
            }
            state.didFinishDownloading(
                task: downloadTask.taskIdentifier, status: response?.statusCode ?? 0, headers: headers,
                location: location)
        }

        // URLSessionTaskDelegate.urlSession(_:task:didCompleteWithError:): only client-side errors arrive here; a
        // download task that failed resumably carries NSURLSessionDownloadTaskResumeData in the error's userInfo.
        public func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            tasks.forget(task.taskIdentifier)
            let failure = error.map { error in
                (
                    reason: error.localizedDescription,
                    resumeData: (error as NSError).userInfo[NSURLSessionDownloadTaskResumeData] as? Data
                )
            }
            state.didComplete(task: task.taskIdentifier, error: failure)
        }

        // URLSessionDelegate.urlSessionDidFinishEvents(forBackgroundURLSession:): every event of this launch is in.
        public func urlSessionDidFinishEvents(forBackgroundURLSession session: URLSession) {
            if let completion = state.eventsDelivered() { completion() }
        }
    }

    /// The session's tasks by identifier, for ``BackgroundSessionState`` to create, resume and cancel.
    final class SessionTasks: BackgroundTaskSystem {
        private let session = Mutex<URLSession?>(nil)
        private let made = Mutex<[Int: URLSessionDownloadTask]>([:])

        func attach(_ session: URLSession) { self.session.withLock { $0 = session } }

        func makeTask(_ request: BackgroundTransfer.PieceRequest) -> Int {
            let session = self.session.withLock { $0 }!
            let task: URLSessionDownloadTask
            if let resumeData = request.resumeData {
                // URLSession.downloadTask(withResumeData:): continues where the failed task stopped.
                task = session.downloadTask(withResumeData: resumeData)
            } else {
                var outgoing = URLRequest(url: request.url)
                for (name, value) in request.headers { outgoing.setValue(value, forHTTPHeaderField: name) }
                // URLSession.downloadTask(with:): the system writes the body to a file of its own.
                task = session.downloadTask(with: outgoing)
            }
            // URLSessionTask.earliestBeginDate: the backoff after a failure; background sessions only.
            task.earliestBeginDate = request.notBefore
            // URLSessionTask.countOfBytesClientExpectsToReceive: lets the system schedule the task well.
            task.countOfBytesClientExpectsToReceive = request.expectedBytes
            made.withLock { $0[task.taskIdentifier] = task }
            return task.taskIdentifier
        }

        func resume(_ task: Int) { made.withLock { $0[task] }?.resume() }

        func cancel(_ task: Int) {
            if let known = made.withLock({ $0[task] }) {
                known.cancel()
                return
            }
            // A task of an earlier launch: found among the session's (URLSession.getAllTasks).
            session.withLock { $0 }?.getAllTasks { tasks in
                tasks.first { $0.taskIdentifier == task }?.cancel()
            }
        }

        func forget(_ task: Int) { made.withLock { _ = $0.removeValue(forKey: task) } }
    }
#endif
