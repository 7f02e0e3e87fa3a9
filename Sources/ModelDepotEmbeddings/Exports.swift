// An app that imports this product gets the vocabulary it speaks: transcripts, audio input, the embedder
// protocol and vector search.
@_exported import ModelDepotInferenceCore
