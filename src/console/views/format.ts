/** The logged-in user every settings view shows in its header. */
export interface PageUser {
  id: number;
  login: string;
  csrf: string;
}
