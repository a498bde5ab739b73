// Herald's demo: what a user meets first, step by step.
// Run it from the repository root with `swift run --package-path Examples demo`.

print("Herald demo: objects observe objects; observable objects send messages.")
viewModelScene()
collaborationScene()
keyPathScene()
collectionsScene()
observationScene()
swiftUIScene()
syntheticScene()
print("\nDone.")
