/** Where a command writes; tests capture it, `main` passes the process streams. */
export interface CommandIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}
