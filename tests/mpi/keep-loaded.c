/* Test-only shim for the sanitizer pass: dlclose does nothing.
 *
 * MPI libraries unload their transport modules at MPI_Finalize (MPICH's UCX
 * libuct_*.so, Open MPI's mca_*.so). Memory those modules still reference from
 * their globals then looks leaked, and LeakSanitizer can only name the frame
 * "<unknown module>", which no suppression by library name can match. Keeping
 * the modules mapped makes that memory reachable again; OSMP never dlcloses
 * anything, so nothing of ours is hidden by this. */
int dlclose(void *handle);
int dlclose(void *handle)
{
  (void)handle;
  return 0;
}
