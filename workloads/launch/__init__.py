"""A workload from a service profile: launch, preview (`?dryRun=true`), upgrades, and their API routes and
pages. Reads profiles through profiles' selectors; profiles never imports this."""
