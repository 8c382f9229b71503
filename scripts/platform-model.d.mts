export declare const platformModelOn: (env?: Record<string, string | undefined>) => boolean;
export declare const MODELLED_CONTROL_ENTRY: string;
