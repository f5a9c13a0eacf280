// The types of scripts/structure.js, for the test that runs it in-process.
export interface Floor {
  name: string;
  holds: (file: string) => boolean;
}
export interface Structure {
  loose: string[];
  arrows: Array<{ arrow: string; imports: string[] }>;
  cycles: string[][];
  submissionPath: { files: string[]; folders: string[] };
}
export declare const FLOORS: Floor[];
export declare const floorOf: (file: string) => number;
export declare const roomOf: (file: string) => string;
export declare const SUBMISSION_ROUTE: { file: string; name: string };
export declare const submissionPath: (root: string, start?: { file: string; name: string }) => Structure['submissionPath'];
export declare const measure: (root?: string) => Structure;
export declare const report: (numbers: Structure) => string;
