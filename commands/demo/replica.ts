// Placeholder: the demo's replica program (demo issue).
export {}
